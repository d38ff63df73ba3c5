"""Hand-written store content that tasks ask about: CMS pages, design themes, featured products and reviews.

Generated data answers "how many" and "which" questions; questions about what customers *say* (their
complaints, who mentions a detail, what they like) need reviews written for the purpose, and admin tasks
need Magento's stock content (the CMS pages and themes every installation has). Everything here is
fixed text, inserted after the generated rows, so it never shifts them.
"""

from __future__ import annotations

import hashlib
import re
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


# Featured products: (category url_path, brand, name, price, qty, sizes, colors, description). Their stock
# levels are ones the generated catalogue never uses, so "which products have N units left" has one answer.
FEATURED = (
    (
        "electronics/headphones",
        "Anker Soundcore",
        "Soundcore Kids Wireless Headphones - Foldable Over-Ear with 85dB Volume Limit, Blue",
        39.99,
        60,
        "",
        "",
        "Foldable over-ear headphones for kids with an 85dB volume limit, 40-hour battery and a shareable audio jack.",
    ),
    (
        "home-kitchen/kitchen-dining",
        "Hamilton Beach",
        "Hamilton Beach Stainless Steel Electric Kettle, 1.7 Liter - Auto Shut-Off and Boil-Dry Protection",
        29.99,
        2,
        "",
        "",
        "A 1.7 liter cordless kettle with a stainless steel body, concealed heating element and auto shut-off.",
    ),
    (
        "office-products/office-supplies",
        "Moleskine",
        "Moleskine Classic Hardcover Notebook, Large, Dotted - 240 Pages",
        22.95,
        2,
        "",
        "",
        "The classic notebook with a hard cover, elastic closure, ribbon bookmark and 240 dotted ivory pages.",
    ),
    (
        "clothing-shoes-jewelry/women/clothing",
        "Columbia",
        "Columbia Women's Arcadia II Rain Jacket - Waterproof, Packable Hood",
        64.99,
        40,
        "XS,S,M,L,XL",
        "Blue,Red,Green",
        "A waterproof, breathable shell with an adjustable hood that stows in the collar.",
    ),
    (
        "sports-outdoors/exercise-fitness",
        "Gaiam",
        "Gaiam Classic Balance Ball Chair - Exercise Stability Yoga Ball Chair with Back Support",
        79.98,
        25,
        "",
        "",
        "An exercise ball on a stable base with a backrest, for active sitting at a desk.",
    ),
    (
        "electronics/computers-accessories",
        "Logitech",
        "Logitech MX Master 3S Wireless Performance Mouse - Quiet Clicks, 8K DPI, USB-C",
        99.99,
        7,
        "",
        "",
        "An ergonomic wireless mouse with quiet clicks, an 8000 DPI sensor and a fast electromagnetic scroll wheel.",
    ),
    (
        "electronics/cell-phones-accessories",
        "EYZUTAK",
        "EYZUTAK Glitter Phone Case for iPhone 13, Sparkly Bling Cover - Pink",
        12.99,
        45,
        "",
        "",
        "A slim glitter case with a soft bumper and raised edges around the screen and camera.",
    ),
    (
        "electronics/cell-phones-accessories",
        "EYZUTAK",
        "EYZUTAK Marble Phone Case for Galaxy S22, Slim Shockproof Cover - White",
        10.99,
        38,
        "",
        "",
        "A marble-pattern case with a shock-absorbing frame and a slim, grippy back.",
    ),
)

# Product lines that tasks compare by a number only the name or description gives: game card cases by slot
# count, controllers by release year, brush heads by count. Same fields as FEATURED; a common stock level, so
# stock questions keep their answers.
COMPARED = (
    (
        "video-games/nintendo-switch",
        "Younik",
        "Younik Game Card Case for Nintendo Switch with 8 Game Card Slots, Black",
        9.99,
        100,
        "",
        "",
        "A pocket-size hard shell case that holds 8 Nintendo Switch game cards.",
    ),
    (
        "video-games/nintendo-switch",
        "Younik",
        "Younik Game Card Case for Nintendo Switch with 16 Game Card Slots, Black",
        12.99,
        100,
        "",
        "",
        "A slim hard shell case that holds 16 Nintendo Switch game cards.",
    ),
    (
        "video-games/nintendo-switch",
        "Younik",
        "Younik Game Card Holder for Nintendo Switch with 32 Game Card Slots and 8 Micro SD Slots, Gray",
        19.99,
        100,
        "",
        "",
        "A zippered holder with 32 Nintendo Switch game card slots and 8 micro SD card slots.",
    ),
    (
        "video-games/nintendo-switch",
        "Younik",
        "Younik Game Card Storage Box for Nintendo Switch with 64 Game Card Slots, Gray",
        29.99,
        100,
        "",
        "",
        "A storage box with 64 Nintendo Switch game card slots in four removable trays.",
    ),
    (
        "video-games/xbox-one",
        "Microsoft",
        "Microsoft Xbox One Wireless Controller, Black",
        49.99,
        100,
        "",
        "",
        "The Xbox One controller with textured grips and Bluetooth. Released in August 2016.",
    ),
    (
        "video-games/xbox-one",
        "Microsoft",
        "Microsoft Xbox Elite Wireless Controller Series 2, Black",
        179.99,
        100,
        "",
        "",
        "Adjustable-tension thumbsticks, wrap-around grips and up to 40 hours of battery. Released in November 2019.",
    ),
    (
        "video-games/xbox-one",
        "Microsoft",
        "Microsoft Xbox Wireless Controller, Carbon Black - for Xbox Series X|S, Xbox One and Windows",
        59.99,
        100,
        "",
        "",
        "The Xbox Series X|S controller with a Share button and hybrid D-pad. Released in November 2020.",
    ),
    (
        "video-games/xbox-one",
        "Microsoft",
        "Microsoft Xbox Wireless Controller, Pulse Red - for Xbox Series X|S, Xbox One and Windows",
        64.99,
        100,
        "",
        "",
        "The Xbox Series X|S controller in Pulse Red, with a Share button and hybrid D-pad. Released in February 2021.",
    ),
    (
        "video-games/xbox-one",
        "Microsoft",
        "Microsoft Xbox Wireless Controller, Stellar Shift Special Edition",
        69.99,
        100,
        "",
        "",
        "A special edition Xbox Series X|S controller with a color-shifting finish. Released in April 2022.",
    ),
    (
        "beauty-personal-care/oral-care/children-s-dental-care",
        "Oral-B",
        "Oral-B Kids Extra Soft Replacement Brush Heads featuring Frozen, 2 Count",
        8.98,
        100,
        "",
        "",
        "Extra soft replacement brush heads for Oral-B kids electric toothbrushes, ages 3 and up.",
    ),
    (
        "beauty-personal-care/oral-care/children-s-dental-care",
        "Oral-B",
        "Oral-B Kids Stages Power Star Wars Replacement Brush Heads, 4 Pack",
        15.96,
        100,
        "",
        "",
        "Soft replacement brush heads for Oral-B kids battery toothbrushes, ages 3 and up.",
    ),
)

# Reviews of the featured products: (product index, customer id or None, nickname, rating, status, title,
# detail, date). Customer ids are the seed's registered customers; None is a guest.
FEATURED_REVIEWS = (
    (
        0,
        None,
        "Joseph B.",
        2,
        1,
        "Too small for my son",
        "The ear cups are small for his ears and the band pinches after an hour of use.",
        "2023-02-03 19:20:00",
    ),
    (
        0,
        None,
        "Catso",
        3,
        1,
        "Fine sound, tight fit",
        "Sound is clear, but the ear cups being small makes them uncomfortable on long car rides.",
        "2023-02-19 08:45:00",
    ),
    (
        0,
        14,
        None,
        4,
        1,
        "Good for younger kids",
        "My daughter is five and they fit her well. Older kids will find the small ear cups tight.",
        "2023-03-07 12:10:00",
    ),
    (
        0,
        None,
        "Michelle D.",
        5,
        1,
        "Battery lasts forever",
        "We charge them once a week. The colors are bright and the fold is sturdy.",
        "2023-03-22 17:30:00",
    ),
    (
        0,
        None,
        "Rachel",
        4,
        1,
        "Survived two drops",
        "They fell off the table twice and still work. The cable could be longer.",
        "2023-04-11 09:05:00",
    ),
    (
        1,
        None,
        "kettlefan",
        2,
        1,
        "Leaks and gets hot",
        "Leaks from the lid when it is full. The handle gets hot after boiling, so I use a towel.",
        "2023-01-14 07:40:00",
    ),
    (
        1,
        22,
        None,
        3,
        1,
        "Fast but noisy",
        "Boils fast, but it is loud. The water tastes like plastic for the first week.",
        "2023-02-08 18:25:00",
    ),
    (
        1,
        None,
        "Tea Time",
        5,
        1,
        "Perfect for tea",
        "Boils a full kettle in four minutes and shuts off by itself.",
        "2023-03-15 16:00:00",
    ),
    (1, None, "Dan W.", 4, 1, "Does the job", "Simple and quick. Looks nice on the counter.", "2023-04-02 10:30:00"),
    (
        2,
        None,
        "inkandpaper",
        5,
        1,
        "My favourite notebook",
        "The dotted pages are perfect for sketching and the cover holds up in my bag.",
        "2023-01-09 20:15:00",
    ),
    (
        2,
        37,
        None,
        5,
        1,
        "Worth the price",
        "Great paper, lays flat, and the ribbon bookmark is handy.",
        "2023-02-27 11:50:00",
    ),
    (
        2,
        None,
        "J. Park",
        4,
        1,
        "Classic",
        "Nice feel and sturdy binding. Fountain pen ink shows through a little.",
        "2023-04-18 13:35:00",
    ),
    (
        3,
        9,
        None,
        1,
        1,
        "Not waterproof at all",
        "Soaked through in light rain on the first walk. The zipper also snagged on day two.",
        "2023-02-12 15:20:00",
    ),
    (
        3,
        31,
        None,
        2,
        1,
        "Runs small",
        "The sleeves are short and it is tight across the shoulders. Order a size up.",
        "2023-03-01 09:10:00",
    ),
    (
        3,
        None,
        "hikergal",
        5,
        1,
        "Light and packable",
        "It folds into its own pocket and weighs nothing. Perfect for travel.",
        "2023-03-19 18:45:00",
    ),
    (3, 48, None, 4, 1, "Great color", "Love the color and the hood stays put in the wind.", "2023-04-06 08:30:00"),
    (
        3,
        55,
        None,
        2,
        1,
        "Hood is useless",
        "The hood blocks my side view and the fabric is noisy when I walk.",
        "2023-05-02 19:00:00",
    ),
    (
        4,
        12,
        None,
        5,
        1,
        "My back thanks me",
        "I sit on it all day at my desk. Much better posture and no more back pain.",
        "2023-01-22 14:05:00",
    ),
    (
        4,
        26,
        None,
        2,
        1,
        "Ball loses air",
        "The ball loses air every few days and the pump that comes with it broke.",
        "2023-02-15 10:40:00",
    ),
    (
        4,
        None,
        "deskworker",
        4,
        1,
        "Comfortable",
        "Comfortable and fun. Assembly took ten minutes.",
        "2023-03-28 12:20:00",
    ),
    (
        4,
        40,
        None,
        1,
        1,
        "Wobbly base",
        "The base wobbles on carpet and one wheel cracked within a month.",
        "2023-04-20 17:15:00",
    ),
    (
        5,
        5,
        None,
        5,
        1,
        "Best mouse I have owned",
        "The scroll wheel is amazing for long spreadsheets and the clicks are silent.",
        "2023-01-30 09:55:00",
    ),
    (
        5,
        61,
        None,
        5,
        1,
        "Fits my hand",
        "Very comfortable shape for a big hand, and the battery lasts weeks.",
        "2023-03-10 21:10:00",
    ),
    (
        5,
        None,
        "codemonkey",
        4,
        1,
        "Great for work",
        "Switching between my laptop and desktop is seamless. A bit heavy.",
        "2023-04-25 11:25:00",
    ),
    (
        5,
        18,
        None,
        2,
        2,
        "Double clicks",
        "After two weeks the left button started to double click.",
        "2023-05-21 16:45:00",
    ),
    (
        6,
        None,
        "Lisa Lee",
        3,
        1,
        "Pretty but cracked",
        "It looks so pretty and sparkly, but the edge cracked after a month. The quality does not match the price.",
        "2023-01-14 18:40:00",
    ),
    (
        7,
        None,
        "N Randall",
        2,
        1,
        "Looks nice, breaks easily",
        "The marble print looks elegant, but the case cracked the first time I dropped my phone. Quality is poor.",
        "2023-01-28 12:05:00",
    ),
    (
        6,
        None,
        "Evelyn Kurver",
        1,
        1,
        "Fell apart in a week",
        "The glitter layer peeled off within a week and the corners split. Very poor quality.",
        "2023-02-09 20:15:00",
    ),
    (
        6,
        None,
        "Misba009",
        5,
        1,
        "Gorgeous",
        "Absolutely beautiful case, the glitter catches the light everywhere I go.",
        "2023-02-22 09:30:00",
    ),
    (
        6,
        None,
        "Amanda",
        4,
        1,
        "Cute but flimsy",
        "Really cute design and my friends love how it looks, though the material feels flimsy and thin.",
        "2023-03-05 14:50:00",
    ),
    (
        7,
        None,
        "Bethany Robertson",
        5,
        1,
        "Elegant",
        "Elegant marble pattern that looks far more expensive than it is, and it fits perfectly.",
        "2023-03-18 16:25:00",
    ),
    (
        6,
        None,
        "Cally",
        5,
        1,
        "So stylish",
        "Stylish and slim, and the buttons still click nicely. It looks great with my pink phone.",
        "2023-04-02 11:10:00",
    ),
    (
        7,
        None,
        "Amazon Customer",
        4,
        1,
        "Nice looking case",
        "Nice looking case with a good grip on the sides.",
        "2023-04-11 08:45:00",
    ),
    (
        7,
        None,
        "MH",
        5,
        1,
        "Fits well",
        "Fits my Galaxy snugly and the raised edges protect the camera.",
        "2023-04-20 19:35:00",
    ),
)


def add_featured(conn: sqlite3.Connection) -> None:
    """The featured and compared products, and the featured ones' reviews (named by registered customers where a
    customer id is given)."""
    ids = []
    for path, brand, name, price, qty, sizes, colors, description in FEATURED + COMPARED:
        category = conn.execute("SELECT id FROM shop_category WHERE url_path = ?", (path,)).fetchone()[0]
        sku = "B0F" + hashlib.sha256(name.encode()).hexdigest()[:7].upper()
        cur = conn.execute(
            "INSERT INTO shop_product (sku, name, url_key, category_id, brand, price, qty, is_in_stock, status,"
            " sizes, colors, weight, description, created_at, position) VALUES (?, ?, ?, ?, ?, ?, ?, 1, 1, ?, ?, 1.5,"
            " ?, '2022-11-15 09:00:00', 0)",
            (sku, name, _slug(name), category, brand, price, qty, sizes, colors, description),
        )
        ids.append(cur.lastrowid)
    for index, customer_id, nickname, rating, status, title, detail, when in FEATURED_REVIEWS:
        if customer_id is not None:
            first, last = conn.execute(
                "SELECT firstname, lastname FROM shop_customer WHERE id = ?", (customer_id,)
            ).fetchone()
            nickname = f"{first} {last}"
        conn.execute(
            "INSERT INTO shop_review (product_id, customer_id, nickname, title, detail, rating, status, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (ids[index], customer_id, nickname, title, detail, rating, status, when),
        )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def add_content(conn: sqlite3.Connection) -> None:
    """The CMS pages and themes of a fresh Magento installation."""
    conn.executemany(
        "INSERT INTO shop_cms_page (title, identifier, content_heading, content, is_active, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, 1, ?, ?)",
        [(*page, CMS_DATE, CMS_DATE) for page in CMS_PAGES],
    )
    conn.executemany("INSERT INTO shop_theme (title, parent_id, path, area) VALUES (?, ?, ?, ?)", THEMES)
