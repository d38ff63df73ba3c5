"""Action wrappers: each turns one action grammar of the papers into BrowserGym actions, strictly parsed."""
