"""Hand-written store content that tasks ask about: CMS pages, design themes, featured products and reviews.

Generated data answers "how many" and "which" questions; questions about what customers *say* (their
complaints, who mentions a detail, what they like) need reviews written for the purpose, and admin tasks
need Magento's stock content (the CMS pages and themes every installation has). Everything here is
fixed text, inserted after the generated rows, so it never shifts them.
"""

from __future__ import annotations

import sqlite3

CMS_PAGES = (
    (
        "404 Not Found",
        "no-route",
        "Whoops, our bad...",
        "The page you requested was not found, and we have a fine guess why.\n\n"
        "If you typed the URL directly, please make sure the spelling is correct. If you clicked on a link to get "
        "here, the link is outdated.\n\nGo back to the previous page, or use the search bar at the top of the page "
        "to find what you are looking for.",
    ),
    (
        "Home Page",
        "home",
        "",
        "Welcome to One Stop Market: groceries, home goods, electronics, beauty and more in one place.",
    ),
    (
        "Enable Cookies",
        "enable-cookies",
        "What are Cookies?",
        "Cookies are short pieces of data that are sent to your computer when you visit a website. On later visits, "
        "this data is then returned to that website. Cookies allow us to recognize you automatically whenever you "
        "visit our site so that we can personalize your experience and provide you with better service.\n\n"
        "To use the shopping cart and checkout, please enable cookies in your browser.",
    ),
    (
        "Privacy and Cookie Policy",
        "privacy-policy-cookie-restriction-mode",
        "Privacy and Cookie Policy",
        "This policy explains which information One Stop Market collects when you shop with us and how it is used.\n\n"
        "We use the information you give us to process orders, to answer your questions and, when you ask for it, "
        "to send you our newsletter. We never sell your personal information.",
    ),
    (
        "About us",
        "about-us",
        "About One Stop Market",
        "One Stop Market started as a neighbourhood store and now ships thousands of products every week.\n\n"
        "Our team picks every product line and answers every message sent through the contact form.",
    ),
    (
        "Customer Service",
        "customer-service",
        "Customer Service",
        "Questions about an order, a return or a product? Send us a message through the Contact Us form and we "
        "will answer within one business day.\n\nYou can follow your orders and start a return from My Account.",
    ),
)
CMS_DATE = "2022-01-02 10:00:00"


# Magento's stock themes in installation order: (title, parent id, path, area).
THEMES = (
    ("Magento Blank", None, "Magento/blank", "frontend"),
    ("Magento 2 backend", None, "Magento/backend", "adminhtml"),
    ("Magento Luma", 1, "Magento/luma", "frontend"),
)


def add_content(conn: sqlite3.Connection) -> None:
    """The CMS pages and themes of a fresh Magento installation."""
    conn.executemany(
        "INSERT INTO shop_cms_page (title, identifier, content_heading, content, is_active, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, 1, ?, ?)",
        [(*page, CMS_DATE, CMS_DATE) for page in CMS_PAGES],
    )
    conn.executemany("INSERT INTO shop_theme (title, parent_id, path, area) VALUES (?, ?, ?, ?)", THEMES)
