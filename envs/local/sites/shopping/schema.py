"""SQLite tables shared by the storefront and its admin (one database, as in Magento)."""

SCHEMA = """
CREATE TABLE shop_category (
    id INTEGER PRIMARY KEY,
    parent_id INTEGER REFERENCES shop_category(id),
    name TEXT NOT NULL,
    url_path TEXT NOT NULL UNIQUE,
    position INTEGER NOT NULL
);
CREATE TABLE shop_product (
    id INTEGER PRIMARY KEY,
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    url_key TEXT NOT NULL UNIQUE,
    category_id INTEGER NOT NULL REFERENCES shop_category(id),
    brand TEXT NOT NULL,
    price REAL NOT NULL,
    qty INTEGER NOT NULL,
    is_in_stock INTEGER NOT NULL,
    status INTEGER NOT NULL,          -- 1 enabled, 2 disabled (Magento's values)
    sizes TEXT NOT NULL DEFAULT '',   -- comma separated option values
    colors TEXT NOT NULL DEFAULT '',
    weight REAL NOT NULL,
    description TEXT NOT NULL,
    created_at TEXT NOT NULL,
    position INTEGER NOT NULL DEFAULT 0, -- order within its category ("Position" sorting)
    sale INTEGER NOT NULL DEFAULT 0      -- the store's "Sale" attribute: 1 yes, 0 no
);
CREATE INDEX shop_product_category ON shop_product(category_id);
CREATE TABLE shop_product_child (    -- a configurable product's variations (Magento's child simple products)
    id INTEGER PRIMARY KEY,
    parent_id INTEGER NOT NULL REFERENCES shop_product(id),
    name TEXT NOT NULL,               -- "<parent name>-<size>-<color>", as Magento's wizard names them
    sku TEXT NOT NULL UNIQUE,
    size TEXT NOT NULL,
    color TEXT NOT NULL,
    price REAL NOT NULL,
    qty INTEGER NOT NULL,
    status INTEGER NOT NULL           -- 1 enabled, 2 disabled
);
CREATE INDEX shop_product_child_parent ON shop_product_child(parent_id);
CREATE TABLE shop_customer (
    id INTEGER PRIMARY KEY,
    firstname TEXT NOT NULL,
    lastname TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    phone TEXT NOT NULL,
    gender TEXT NOT NULL,
    date_of_birth TEXT NOT NULL,
    newsletter INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE TABLE shop_address (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES shop_customer(id),
    firstname TEXT NOT NULL,
    lastname TEXT NOT NULL,
    company TEXT NOT NULL DEFAULT '',
    street1 TEXT NOT NULL,
    street2 TEXT NOT NULL DEFAULT '',
    city TEXT NOT NULL,
    region TEXT NOT NULL,
    postcode TEXT NOT NULL,
    country TEXT NOT NULL,
    phone TEXT NOT NULL,
    is_default_billing INTEGER NOT NULL DEFAULT 0,
    is_default_shipping INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE shop_order (
    id INTEGER PRIMARY KEY,
    increment_id TEXT NOT NULL UNIQUE,
    customer_id INTEGER NOT NULL REFERENCES shop_customer(id),
    created_at TEXT NOT NULL,
    status TEXT NOT NULL,              -- pending, processing, complete, canceled
    ship_firstname TEXT NOT NULL,
    ship_lastname TEXT NOT NULL,
    ship_street TEXT NOT NULL,
    ship_city TEXT NOT NULL,
    ship_region TEXT NOT NULL,
    ship_postcode TEXT NOT NULL,
    ship_country TEXT NOT NULL,
    ship_phone TEXT NOT NULL,
    shipping_method TEXT NOT NULL,
    shipping_amount REAL NOT NULL,
    subtotal REAL NOT NULL,
    grand_total REAL NOT NULL
);
CREATE INDEX shop_order_customer ON shop_order(customer_id);
CREATE TABLE shop_order_item (
    id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES shop_order(id),
    product_id INTEGER NOT NULL REFERENCES shop_product(id),
    sku TEXT NOT NULL,
    name TEXT NOT NULL,
    options TEXT NOT NULL DEFAULT '',
    price REAL NOT NULL,
    qty INTEGER NOT NULL
);
CREATE INDEX shop_order_item_order ON shop_order_item(order_id);
CREATE TABLE shop_order_comment (
    id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES shop_order(id),
    created_at TEXT NOT NULL,
    status TEXT NOT NULL,
    comment TEXT NOT NULL,
    notify INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE shop_review (
    id INTEGER PRIMARY KEY,
    product_id INTEGER NOT NULL REFERENCES shop_product(id),
    customer_id INTEGER REFERENCES shop_customer(id),
    nickname TEXT NOT NULL,
    title TEXT NOT NULL,
    detail TEXT NOT NULL,
    rating INTEGER NOT NULL,           -- 1..5 stars
    status INTEGER NOT NULL,           -- 1 approved, 2 pending, 3 not approved (Magento's values)
    created_at TEXT NOT NULL
);
CREATE INDEX shop_review_product ON shop_review(product_id);
CREATE TABLE shop_wishlist (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES shop_customer(id),
    product_id INTEGER NOT NULL REFERENCES shop_product(id),
    added_at TEXT NOT NULL,
    UNIQUE (customer_id, product_id)
);
CREATE TABLE shop_cart_item (
    id INTEGER PRIMARY KEY,
    cart_key TEXT NOT NULL,            -- 'c<customer id>' or a guest token kept in the session
    product_id INTEGER NOT NULL REFERENCES shop_product(id),
    options TEXT NOT NULL DEFAULT '',
    qty INTEGER NOT NULL
);
CREATE TABLE shop_contact (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    phone TEXT NOT NULL,
    comment TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE shop_search_term (
    id INTEGER PRIMARY KEY,
    query TEXT NOT NULL UNIQUE,
    num_results INTEGER NOT NULL,
    uses INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE shop_invoice (
    id INTEGER PRIMARY KEY,
    increment_id TEXT NOT NULL UNIQUE,
    order_id INTEGER NOT NULL REFERENCES shop_order(id),
    created_at TEXT NOT NULL,
    grand_total REAL NOT NULL
);
CREATE TABLE shop_shipment (
    id INTEGER PRIMARY KEY,
    increment_id TEXT NOT NULL UNIQUE,
    order_id INTEGER NOT NULL REFERENCES shop_order(id),
    created_at TEXT NOT NULL,
    total_qty INTEGER NOT NULL
);
CREATE TABLE shop_shipment_track (
    id INTEGER PRIMARY KEY,
    shipment_id INTEGER NOT NULL REFERENCES shop_shipment(id),
    carrier TEXT NOT NULL,              -- carrier code: custom, dhl, fedex, ups, usps
    title TEXT NOT NULL,
    number TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE shop_theme (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    parent_id INTEGER REFERENCES shop_theme(id),
    path TEXT NOT NULL,
    area TEXT NOT NULL                  -- frontend or adminhtml (the admin grid lists frontend themes)
);
CREATE TABLE shop_sales_rule (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    is_active INTEGER NOT NULL,
    website_ids TEXT NOT NULL,
    customer_group_ids TEXT NOT NULL,
    coupon_code TEXT NOT NULL DEFAULT '',
    from_date TEXT NOT NULL DEFAULT '',
    to_date TEXT NOT NULL DEFAULT '',
    priority INTEGER NOT NULL DEFAULT 0,
    simple_action TEXT NOT NULL,
    discount_amount REAL NOT NULL
);
CREATE TABLE shop_cms_page (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    identifier TEXT NOT NULL UNIQUE,    -- the page's URL key
    content_heading TEXT NOT NULL DEFAULT '',
    content TEXT NOT NULL,
    is_active INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE shop_admin_user (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    firstname TEXT NOT NULL,
    lastname TEXT NOT NULL,
    email TEXT NOT NULL
);
"""
