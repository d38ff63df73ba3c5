"""The embedded local suite: WebArena-like Flask + SQLite sites on 127.0.0.1, their tasks and solutions.

``launcher.LocalSites`` runs one server process per environment instance, ``host.LocalSiteHost``
is the SiteHost the ``webarena/local.<id>`` environments use, ``registry`` lists the tasks and
``serve`` is ``webarena-gym serve``. See docs/design.md ("envs.local").
"""
