"""The catalogue's second wave: more categories and products, appended after the original seed.

WebArena's store has a deep Amazon-like category tree and far more than a page of products in every
category, so its category pages show 24 products, a pager and long layered-navigation lists. The
original seed (``catalog.TREE``, 17 products per leaf) stays byte-identical, because tasks and their
reference answers name its products, orders and reviews; this module only appends: new categories under
existing branches (or new top-level ones), then products until every leaf holds ``PRODUCTS_PER_LEAF``.
Vocabulary lines are ``|``-separated to keep the tables readable.
"""

from __future__ import annotations

from .catalog import Branch, Leaf


def _leaf(
    name: str,
    slug: str,
    brands: str,
    nouns: str,
    modifiers: str,
    variants: str,
    price: tuple[float, float],
    option_kind: str = "",
) -> Leaf:
    return Leaf(
        name,
        slug,
        tuple(brands.split("|")),
        tuple(nouns.split("|")),
        tuple(modifiers.split("|")),
        tuple(variants.split("|")),
        price,
        option_kind,
    )


PRODUCTS_PER_LEAF = 30
# Marketplace listings carry selling points in their titles; grown products get one of these after a dash.
TITLE_TAILS = (
    "Upgraded 2023 Version",
    "Premium Quality, Great Gift Idea",
    "Ships from USA",
    "Value Pack for Home and Office",
    "Easy to Use, 1-Year Warranty",
    "Compact Design for Travel",
    "Customer Favorite",
    "Durable and Long Lasting",
    "Perfect for Everyday Use",
    "Eco-Friendly Packaging",
    "Best Seller, Limited Stock",
    "Satisfaction Guaranteed",
)

# (parent url_path or "" for the top level, new child). Children are appended after the parent's own.
EXTENSIONS: tuple[tuple[str, Branch | Leaf], ...] = (
    (
        "beauty-personal-care",
        Branch(
            "Oral Care",
            "oral-care",
            (
                _leaf(
                    "Toothpaste",
                    "toothpaste",
                    "Colgate|Crest|Sensodyne|Tom's of Maine|Arm & Hammer|hello",
                    "Whitening Toothpaste|Fluoride Toothpaste|"
                    "Sensitive Toothpaste|Charcoal Toothpaste|Enamel Toothpaste",
                    "Fresh Mint|Enamel Repair|Cool Mint|Fluoride-Free|Extra Whitening|Baking Soda",
                    "3.4 oz|Pack of 3|4.1 oz Twin Pack|6 Count",
                    (2.5, 28.0),
                ),
                _leaf(
                    "Children's Dental Care",
                    "children-s-dental-care",
                    "Oral-B|Colgate|Crest|Dr. Brown's|Brush Buddies|Firefly",
                    "Kids Toothbrush|Electric Toothbrush for Kids|"
                    "Toddler Toothbrush|Kids Flossers|Replacement Brush Heads",
                    "Extra Soft|Star Wars|Frozen|Battery Powered|Training|Glow",
                    "2 Count|4 Pack|90 Count|",
                    (2.0, 40.0),
                ),
                _leaf(
                    "Mouth Guards",
                    "mouth-guards",
                    "DenTek|Plackers|Shock Doctor|SleepRight|ProDentec|Oral-B",
                    "Night Guard|Teeth Grinding Mouth Guard|Sports Mouth Guard|Dental Guard|Bruxism Splint",
                    "Moldable|Professional|Custom Fit|Ultra Slim|Dual Layer|Comfort",
                    "2 Pack|4 Count|with Case|",
                    (5.0, 70.0),
                ),
            ),
        ),
    ),
    (
        "sports-outdoors",
        _leaf(
            "Cycling",
            "cycling",
            "Schwinn|Giro|Bell|CamelBak|Topeak|Garmin",
            "Bike Helmet|Bike Light Set|Bike Lock|Cycling Gloves|Bike Pump|Water Bottle Cage",
            "Adult|Rechargeable|Heavy Duty|Mini|Padded|Lightweight",
            "|Black|Large|2 Pack",
            (8.0, 220.0),
        ),
    ),
    (
        "sports-outdoors",
        _leaf(
            "Water Sports",
            "water-sports",
            "Speedo|TYR|Aqua Sphere|Arena|O'Neill|Intex",
            "Swim Goggles|Swim Cap|Kickboard|Snorkel Set|Wetsuit|Life Jacket",
            "Anti-Fog|Silicone|Adult|Youth|Competition|Mirrored",
            "|2 Pack|Blue|Clear",
            (6.0, 180.0),
        ),
    ),
    (
        "clothing-shoes-jewelry/women",
        _leaf(
            "Jewelry",
            "jewelry",
            "Pandora|Swarovski|Kendra Scott|Fossil|PAVOI|Amazon Essentials",
            "Pendant Necklace|Stud Earrings|Charm Bracelet|Hoop Earrings|Cocktail Ring|Anklet",
            "14K Gold Plated|Sterling Silver|Rose Gold|Crystal|Minimalist|Pearl",
            "|Gift Box|Set of 3",
            (12.0, 250.0),
        ),
    ),
    (
        "clothing-shoes-jewelry/men",
        _leaf(
            "Watches",
            "watches",
            "Casio|Timex|Fossil|Citizen|Seiko|Invicta",
            "Chronograph Watch|Digital Sport Watch|Dress Watch|Diver Watch|Field Watch|Smart Hybrid Watch",
            "Men's|Stainless Steel|Leather Strap|Solar|Analog|Titanium",
            "|Black Dial|Blue Dial|Silver Tone",
            (20.0, 450.0),
        ),
    ),
    (
        "clothing-shoes-jewelry",
        Branch(
            "Sport Specific Clothing",
            "sport-specific-clothing",
            (
                _leaf(
                    "Competitive Swimwear",
                    "competitive-swimwear",
                    "Speedo|TYR|Arena|Nike Swim|Dolfin|Jolyn",
                    "Jammer|One Piece Swimsuit|Racerback Swimsuit|Swim Brief|Tankini Set|Training Suit",
                    "Women's|Men's|Endurance+|Solid|Printed|Chlorine Resistant",
                    "",
                    (18.0, 120.0),
                    "apparel",
                ),
            ),
        ),
    ),
    (
        "home-kitchen",
        Branch(
            "Home Décor",
            "home-decor",
            (
                _leaf(
                    "Artificial Plants & Flowers",
                    "artificial-plants-flowers",
                    "Nearly Natural|Bornbridge|Fopamtri|Velener|Briful|CEWOR",
                    "Fiddle Leaf Fig Tree|Spiral Topiary Tree|Hanging Ivy Vines|"
                    "Potted Succulents|Olive Tree|Eucalyptus Stems",
                    "Artificial|Faux|Indoor Outdoor|UV Resistant|Lifelike|Mini",
                    "|2 Pack|4 ft|6 ft|Green-vines",
                    (9.0, 280.0),
                ),
                _leaf(
                    "Candles & Holders",
                    "candles-holders",
                    "Yankee Candle|Bath & Body Works|Chesapeake Bay|Hosley|Mainstays|SPAAS",
                    "Jar Candle|Taper Candles|Pillar Candle|Tealight Candles|Candle Holder Set|Wall Candle Sconces",
                    "Scented|Unscented|Lavender|Vanilla|Dripless|Soy Wax",
                    "|4 Pack|12 Pack|Large",
                    (5.0, 60.0),
                ),
                _leaf(
                    "Picture Frames",
                    "picture-frames",
                    "Americanflat|MCS|Umbra|Pinnacle|Golden State Art|Frametory",
                    "Picture Frame|Collage Frame|Poster Frame|Floating Frame|Shadow Box",
                    "Black|White|Rustic Wood|Gold|Mist|Gallery",
                    "8x10|11x14|16x24|Set of 6",
                    (8.0, 90.0),
                ),
            ),
        ),
    ),
    (
        "electronics",
        _leaf(
            "Home Audio",
            "home-audio",
            "Bose|Sonos|Polk Audio|Yamaha|Klipsch|Russound",
            "Bookshelf Speakers|Soundbar|Bluetooth Speaker|Indoor Outdoor Speakers|Subwoofer|Smart Speaker",
            "Wireless|Powered|Compact|Dolby Atmos|Portable|Waterproof",
            "|Pair|Black|White",
            (25.0, 900.0),
        ),
    ),
    (
        "electronics",
        _leaf(
            "Camera & Photo",
            "camera-photo",
            "Canon|Nikon|Fujifilm|Kodak|GoPro|Sony",
            "Digital Camera|Instant Camera|Action Camera|Camera Tripod|Camera Bag|Photo Printer",
            "Compact|Mirrorless|4K|Waterproof|Travel|Wireless",
            "|Kit|Black|Bundle",
            (15.0, 950.0),
        ),
    ),
    (
        "electronics",
        _leaf(
            "Television & Video",
            "television-video",
            "Samsung|LG|TCL|Sceptre|Roku|Insignia",
            "LED TV|Smart TV|Streaming Stick|TV Wall Mount|HDMI Cable|Blu-ray Player",
            "32-Inch|4K Ultra HD|Full Motion|High Speed|1080p|Class",
            "|2022 Model|6 ft|2 Pack",
            (9.0, 1100.0),
        ),
    ),
    (
        "video-games/playstation-4",
        _leaf(
            "Games",
            "games",
            "Sony|Ubisoft|Electronic Arts|Activision|Bethesda|Capcom",
            "Racing Game|Adventure Game|Sports Game|Shooter Game|Fighting Game|Puzzle Game",
            "Standard Edition|Deluxe Edition|Game of the Year|Hits|Complete Edition",
            "|PlayStation 4|Digital Code",
            (9.0, 70.0),
        ),
    ),
    (
        "grocery-gourmet-food",
        _leaf(
            "Breakfast Foods",
            "breakfast-foods",
            "Kellogg's|Quaker|General Mills|Post|Bob's Red Mill|Kodiak Cakes",
            "Breakfast Cereal|Instant Oatmeal|Pancake Mix|Granola|Breakfast Bars|Steel Cut Oats",
            "Whole Grain|Maple Brown Sugar|Honey Nut|Protein|Gluten Free|Original",
            "Family Size|Pack of 6|24 oz|10 Count",
            (3.0, 40.0),
        ),
    ),
    (
        "grocery-gourmet-food",
        _leaf(
            "Candy & Chocolate",
            "candy-chocolate",
            "Lindt|Hershey's|Ghirardelli|M&M's|Haribo|Ferrero Rocher",
            "Chocolate Truffles|Milk Chocolate Bar|Gummy Bears|"
            "Assorted Chocolates|Peanut Butter Cups|Candy Variety Pack",
            "Dark|Sea Salt Caramel|Holiday|Fruit|Mini|Share Size",
            "Pack of 12|30 Count|5 lb Bag|Gift Box",
            (3.0, 55.0),
        ),
    ),
    (
        "health-household",
        Branch(
            "Diet & Sports Nutrition",
            "diet-sports-nutrition",
            (
                _leaf(
                    "Nutrition Bars & Drinks",
                    "nutrition-bars-drinks",
                    "Clif Bar|Quest|Premier Protein|Kellogg's Special K|Atkins|Pure Protein",
                    "Protein Bars|Protein Shake|Meal Replacement Shake|Energy Bars|Protein Meal Bars",
                    "Chocolate Caramel|Vanilla|Peanut Butter|Cookies & Cream|Chocolate Chip|Berry",
                    "12 Count|6 Count|Pack of 18|11 fl oz",
                    (6.0, 45.0),
                ),
            ),
        ),
    ),
    (
        "office-products",
        Branch(
            "Office Furniture & Lighting",
            "office-furniture-lighting",
            (
                _leaf(
                    "Cabinets, Racks & Shelves",
                    "cabinets-racks-shelves",
                    "Sauder|HON|Lorell|Bush Business|Realspace|Amazon Basics",
                    "File Cabinet|Bookcase|Storage Cabinet|Wall Shelf|Printer Stand|Rolling Cart",
                    "2-Drawer|Lateral|Locking|5-Shelf|Mobile|Metal",
                    "|Black|White|Oak",
                    (25.0, 480.0),
                ),
                _leaf(
                    "Desk Lamps",
                    "desk-lamps",
                    "TaoTronics|BenQ|Lepower|Globe Electric|Brightech|Ottlite",
                    "LED Desk Lamp|Architect Lamp|Clamp Lamp|Banker's Lamp|Swing Arm Lamp",
                    "Dimmable|Eye-Caring|USB Charging|Adjustable|Touch Control|Wireless",
                    "|Black|Silver|White",
                    (12.0, 160.0),
                ),
            ),
        ),
    ),
    (
        "office-products",
        _leaf(
            "Office Electronics",
            "office-electronics",
            "HP|Epson|Brother|Canon|Fellowes|Texas Instruments",
            "Inkjet Printer|Laser Printer|Fax Machine|Paper Shredder|Label Maker|Graphing Calculator",
            "All-in-One|Wireless|Compact|Color|Monochrome|Cross-Cut",
            "|Renewed|Bundle",
            (15.0, 650.0),
        ),
    ),
    (
        "",
        Branch(
            "Tools & Home Improvement",
            "tools-home-improvement",
            (
                _leaf(
                    "Lighting & Ceiling Fans",
                    "lighting-ceiling-fans",
                    "Hunter|Globe Electric|Philips|Lithonia|Brightech|Kichler",
                    "Ceiling Fan with Light|Floor Lamp|Table Lamp|Flush Mount Ceiling Light|Pendant Light|LED Bulbs",
                    "Modern|Dimmable|Farmhouse|Smart|Industrial|Crystal",
                    "|2 Pack|Brushed Nickel|Matte Black",
                    (10.0, 1400.0),
                ),
                _leaf(
                    "Power & Hand Tools",
                    "power-hand-tools",
                    "DEWALT|Black+Decker|Makita|Craftsman|Milwaukee|Bosch",
                    "Cordless Drill|Impact Driver|Tool Set|Circular Saw|Screwdriver Set|Tape Measure",
                    "20V MAX|Brushless|Compact|Mechanics|Precision|Heavy Duty",
                    "|Kit|with Case|2 Batteries",
                    (8.0, 400.0),
                ),
            ),
        ),
    ),
    (
        "",
        Branch(
            "Patio, Lawn & Garden",
            "patio-lawn-garden",
            (
                _leaf(
                    "Gardening & Lawn Care",
                    "gardening-lawn-care",
                    "Fiskars|Miracle-Gro|Scotts|Flexzilla|Melnor|Greenworks",
                    "Garden Hose|Pruning Shears|Potting Mix|Sprinkler|Leaf Blower|Garden Kneeler",
                    "Heavy Duty|Expandable|Organic|Cordless|Ergonomic|Oscillating",
                    "|50 ft|100 ft|Pack of 2",
                    (6.0, 250.0),
                ),
                _leaf(
                    "Outdoor Décor",
                    "outdoor-decor",
                    "Brightech|Sunnydaze|Alpine|Evergreen|Plow & Hearth|GIGALUMI",
                    "Solar Pathway Lights|String Lights|Garden Statue|Wind Chimes|Bird Bath|Garden Flag",
                    "Solar Powered|Waterproof|Decorative|Rustic|Hand Painted|LED",
                    "|6 Pack|48 ft|Large",
                    (8.0, 180.0),
                ),
            ),
        ),
    ),
)
