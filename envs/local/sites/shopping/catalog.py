"""The storefront's category tree and the vocabulary products are generated from.

Each leaf lists brands, nouns, modifiers and pack/size variants; the seed combines them with the
seeded RNG, so names read like marketplace listings ("Sony Wireless Noise Canceling Headphones,
Black") and every build produces the same catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Leaf:
    name: str
    slug: str
    brands: tuple[str, ...]
    nouns: tuple[str, ...]
    modifiers: tuple[str, ...]
    variants: tuple[str, ...]
    price: tuple[float, float]
    option_kind: str = ""  # "apparel" (sizes XS-XL + colours), "shoes" (sizes 6-12 + colours) or ""


@dataclass(frozen=True)
class Branch:
    name: str
    slug: str
    children: tuple["Branch | Leaf", ...] = field(default_factory=tuple)


COLORS = ("Black", "White", "Blue", "Red", "Green", "Gray", "Navy", "Pink", "Brown", "Purple")
APPAREL_SIZES = ("XS", "S", "M", "L", "XL")
SHOE_SIZES = ("6", "7", "8", "9", "10", "11", "12")

TREE: tuple[Branch, ...] = (
    Branch("Beauty & Personal Care", "beauty-personal-care", (
        Leaf("Skin Care", "skin-care",
             ("Neutrogena", "CeraVe", "Olay", "La Roche-Posay", "Cetaphil", "Aveeno"),
             ("Daily Moisturizing Lotion", "Hydrating Facial Cleanser", "Vitamin C Serum", "Night Cream",
              "Sunscreen SPF 50", "Eye Cream", "Exfoliating Scrub", "Hyaluronic Acid Serum"),
             ("Fragrance-Free", "Gentle", "Oil-Free", "Ultra", "Sensitive Skin", "Anti-Aging"),
             ("1.7 oz", "3 oz", "8 oz", "12 oz", "Pack of 2"), (6.5, 48.0)),
        Leaf("Hair Care", "hair-care",
             ("Pantene", "Dove", "OGX", "Head & Shoulders", "Moroccanoil", "Garnier"),
             ("Shampoo", "Conditioner", "Hair Mask", "Leave-In Spray", "Argan Oil Treatment", "Dry Shampoo"),
             ("Repair", "Volumizing", "Moisture", "Color Safe", "Sulfate-Free", "Clarifying"),
             ("12 fl oz", "25.4 fl oz", "Twin Pack", "3.4 fl oz"), (4.0, 39.0)),
        Leaf("Makeup", "makeup",
             ("Maybelline", "L'Oreal Paris", "e.l.f.", "NYX", "Revlon", "Covergirl"),
             ("Mascara", "Liquid Foundation", "Matte Lipstick", "Eyeshadow Palette", "Makeup Brush Set",
              "Setting Powder", "Eyeliner Pencil", "Concealer"),
             ("Waterproof", "Long-Lasting", "Volumizing", "Natural", "Full Coverage", "Shimmer"),
             ("", "Pack of 2", "Travel Size"), (3.5, 42.0)),
    )),
    Branch("Sports & Outdoors", "sports-outdoors", (
        Leaf("Exercise & Fitness", "exercise-fitness",
             ("Gaiam", "Bowflex", "Amazon Basics", "Fitbit", "TRX", "CAP Barbell"),
             ("Yoga Mat", "Resistance Bands Set", "Adjustable Dumbbells", "Jump Rope", "Foam Roller",
              "Kettlebell", "Pull Up Bar", "Ab Roller Wheel"),
             ("Premium", "Non-Slip", "Heavy Duty", "Compact", "Extra Thick", "Portable"),
             ("", "15 lb", "25 lb", "Set of 3", "6mm"), (9.0, 349.0)),
        Leaf("Camping & Hiking", "camping-hiking",
             ("Coleman", "Osprey", "Black Diamond", "Kelty", "Teton Sports", "MSR"),
             ("Dome Tent", "Sleeping Bag", "Hiking Backpack", "LED Headlamp", "Camping Stove",
              "Trekking Poles", "Water Filter", "Camp Chair"),
             ("Lightweight", "4-Person", "Waterproof", "Ultralight", "Rechargeable", "Folding"),
             ("", "40L", "65L", "2 Pack"), (12.0, 420.0)),
    )),
    Branch("Clothing, Shoes & Jewelry", "clothing-shoes-jewelry", (
        Branch("Women", "women", (
            Leaf("Shoes", "shoes",
                 ("Skechers", "Clarks", "Dr. Scholl's", "Naturalizer", "Vionic", "Crocs"),
                 ("Running Sneaker", "Ankle Boot", "Ballet Flat", "Slip-On Loafer", "Sandal", "Clog"),
                 ("Women's", "Women's Comfort", "Women's Memory Foam", "Women's Casual"),
                 ("",), (14.0, 140.0), "shoes"),
            Leaf("Clothing", "clothing",
                 ("Levi's", "Hanes", "Columbia", "Champion", "Calvin Klein", "Hollister"),
                 ("Pullover Hoodie", "Racer Tank", "Fleece Jacket", "Yoga Pants", "Crewneck Sweater",
                  "V-Neck T-Shirt", "Denim Jacket", "Leggings"),
                 ("Women's", "Women's Relaxed Fit", "Women's Classic", "Women's Athletic"),
                 ("",), (9.0, 98.0), "apparel"),
        )),
        Branch("Men", "men", (
            Leaf("Shoes", "shoes",
                 ("Nike", "Adidas", "New Balance", "Timberland", "ASICS", "Brooks"),
                 ("Running Shoe", "Work Boot", "Trail Runner", "Leather Oxford", "Slide Sandal", "Walking Shoe"),
                 ("Men's", "Men's Lightweight", "Men's Waterproof", "Men's Classic"),
                 ("",), (19.0, 180.0), "shoes"),
            Leaf("Clothing", "clothing",
                 ("Carhartt", "Under Armour", "Wrangler", "Dickies", "Hollister", "Columbia"),
                 ("Hooded Sweatshirt", "Polo Shirt", "Cargo Shorts", "Flannel Shirt", "Chino Pants",
                  "Quarter-Zip Pullover", "Graphic Tee", "Puffer Vest"),
                 ("Men's", "Men's Regular Fit", "Men's Loose Fit", "Men's Performance"),
                 ("",), (12.0, 110.0), "apparel"),
        )),
    )),
    Branch("Home & Kitchen", "home-kitchen", (
        Leaf("Furniture", "furniture",
             ("Furinno", "Zinus", "Sauder", "Flash Furniture", "Nathan James", "HON"),
             ("Office Chair", "Bookshelf", "Coffee Table", "TV Stand", "Bar Stool", "Nightstand",
              "Folding Chair", "Computer Desk"),
             ("Modern", "Ergonomic", "Mid-Century", "Rustic", "Adjustable", "Industrial"),
             ("", "Set of 2", "Walnut", "Espresso", "White Oak"), (29.0, 560.0)),
        Leaf("Kitchen & Dining", "kitchen-dining",
             ("Cuisinart", "Lodge", "OXO", "KitchenAid", "Hamilton Beach", "Pyrex"),
             ("Cast Iron Skillet", "Chef's Knife", "Blender", "Measuring Cup Set", "Toaster",
              "Glass Food Storage Containers", "Coffee Maker", "Mixing Bowls"),
             ("Pre-Seasoned", "Stainless Steel", "Professional", "12-Cup", "Non-Stick", "Classic"),
             ("", "10 inch", "Set of 4", "18-Piece"), (8.0, 260.0)),
        Leaf("Storage & Organization", "storage-organization",
             ("SimpleHouseware", "mDesign", "Whitmor", "Amazon Basics", "Sterilite", "ONLYEASY"),
             ("Over the Door Shoe Organizer", "Closet Storage Bins", "Hanging Shelves", "Shoe Rack",
              "Under Bed Storage Bag", "Drawer Dividers", "Stackable Baskets", "Garment Rack"),
             ("Foldable", "Clear", "Heavy Duty", "24-Pair", "12-Pair", "Fabric"),
             ("", "Pack of 3", "Pack of 6", "Large"), (7.0, 89.0)),
        Leaf("Bedding", "bedding",
             ("Mellanni", "Utopia Bedding", "Linenspa", "Zinus", "Bedsure", "Tempur-Pedic"),
             ("Sheet Set", "Comforter", "Memory Foam Pillow", "Mattress Topper", "Mattress Foundation",
              "Weighted Blanket", "Duvet Cover", "Mattress Protector"),
             ("Queen", "King", "Twin", "Full", "Cooling", "Hypoallergenic"),
             ("", "Gray", "White", "4 Piece"), (15.0, 330.0)),
    )),
    Branch("Electronics", "electronics", (
        Leaf("Headphones", "headphones",
             ("Sony", "Bose", "JBL", "Anker Soundcore", "Sennheiser", "Skullcandy"),
             ("Wireless Noise Canceling Headphones", "True Wireless Earbuds", "On-Ear Headphones",
              "Sports Earphones", "Over-Ear Studio Headphones", "Kids Headphones"),
             ("Bluetooth", "Wired", "Foldable", "Hi-Res", "Waterproof"),
             ("Black", "Silver", "Blue", "White"), (12.0, 380.0)),
        Leaf("Computers & Accessories", "computers-accessories",
             ("Logitech", "SanDisk", "Anker", "TP-Link", "Samsung", "Seagate"),
             ("Wireless Mouse", "Mechanical Keyboard", "USB-C Hub", "microSD Card", "Portable SSD",
              "USB WiFi Adapter", "Laptop Stand", "External Hard Drive"),
             ("Ergonomic", "Ultra", "Compact", "High Speed", "Backlit", "Dual Band"),
             ("", "64GB", "128GB", "1TB", "2TB"), (9.0, 230.0)),
        Leaf("Cell Phones & Accessories", "cell-phones-accessories",
             ("OtterBox", "Spigen", "Anker", "ESR", "EYZUTAK", "Belkin"),
             ("Phone Case", "Tempered Glass Screen Protector", "Wireless Charger", "Car Phone Mount",
              "USB-C Cable", "Power Bank"),
             ("Shockproof", "Slim", "Fast Charging", "Magnetic", "Clear", "Rugged"),
             ("for iPhone 13", "for iPhone 14", "for Galaxy S22", "3 Pack", "10ft"), (5.0, 70.0)),
    )),
    Branch("Video Games", "video-games", (
        Branch("PlayStation 4", "playstation-4", (
            Leaf("Accessories", "accessories",
                 ("Sony", "PowerA", "Astro Gaming", "HyperX", "Nyko", "OIVO"),
                 ("DualShock 4 Controller", "Charging Station", "Gaming Headset", "Cooling Fan",
                  "Controller Skin", "Vertical Stand"),
                 ("Wireless", "Dual", "Officially Licensed", "Pro", "RGB"),
                 ("", "Jet Black", "Camo", "2 Pack"), (9.0, 250.0)),
        )),
        Leaf("Nintendo Switch", "nintendo-switch",
             ("Nintendo", "HORI", "PowerA", "HEIYING", "Orzly", "8BitDo"),
             ("Game Card Case", "Carrying Case", "Joy-Con Grip", "Pro Controller", "Screen Protector",
              "Charging Dock"),
             ("Portable", "Hard Shell", "24-Slot", "Officially Licensed", "Slim"),
             ("", "for Switch OLED", "Neon", "Gray"), (7.0, 75.0)),
        Leaf("Xbox One", "xbox-one",
             ("Microsoft", "PowerA", "Turtle Beach", "Razer", "PDP", "Seagate"),
             ("Wireless Controller", "Play and Charge Kit", "Gaming Headset", "Game Drive",
              "Controller Charging Stand", "Media Remote"),
             ("Carbon Black", "Robot White", "Enhanced", "Elite", "Wired"),
             ("", "for Series X|S", "2TB"), (14.0, 180.0)),
    )),
    Branch("Grocery & Gourmet Food", "grocery-gourmet-food", (
        Leaf("Snacks", "snacks",
             ("KIND", "Planters", "Pringles", "Nature Valley", "Quaker", "Jiffy"),
             ("Granola Bars", "Mixed Nuts", "Potato Crisps", "Protein Bars", "Rice Cakes",
              "Corn Muffin Mix", "Trail Mix", "Pretzel Crisps"),
             ("Dark Chocolate", "Honey Roasted", "Sea Salt", "Peanut Butter", "Original", "Cinnamon"),
             ("Pack of 12", "24 Count", "16 oz", "Family Size", "8.5 oz Box"), (2.5, 36.0)),
        Leaf("Beverages", "beverages",
             ("Starbucks", "Lipton", "Twinings", "Green Mountain", "LaCroix", "Gatorade"),
             ("Ground Coffee", "Black Tea Bags", "Sparkling Water", "K-Cup Pods", "Sports Drink",
              "Herbal Tea"),
             ("Dark Roast", "Decaf", "Lemon", "Breakfast Blend", "Peppermint", "Variety"),
             ("12 oz Bag", "100 Count", "Pack of 24", "72 Count"), (4.0, 52.0)),
        Leaf("Meat Substitutes", "meat-substitutes",
             ("Beyond Meat", "Impossible", "Gardein", "MorningStar Farms", "Tofurky", "Lightlife"),
             ("Plant-Based Burger Patties", "Meatless Crumbles", "Vegan Sausages", "Chick'n Nuggets",
              "Deli Slices", "Jerky"),
             ("Original", "Spicy", "Smoked", "Teriyaki", "Classic"),
             ("Pack of 4", "Case of 12", "10 oz", "Bulk 5 lb"), (6.0, 190.0)),
    )),
    Branch("Health & Household", "health-household", (
        Leaf("Household Supplies", "household-supplies",
             ("Tide", "Gain", "Seventh Generation", "Clorox", "Lysol", "Bounty"),
             ("Laundry Detergent Pacs", "Liquid Laundry Detergent", "Disinfecting Wipes",
              "Paper Towels", "Dish Soap", "All-Purpose Cleaner"),
             ("Spring Meadow Scent", "Free & Clear", "Original Scent", "Lavender", "Fresh Scent"),
             ("81 Count", "42 Count", "92 fl oz", "Pack of 3", "12 Rolls"), (3.0, 45.0)),
        Leaf("Vitamins & Supplements", "vitamins-supplements",
             ("Nature Made", "Centrum", "Garden of Life", "Optimum Nutrition", "Vital Proteins", "Olly"),
             ("Multivitamin", "Vitamin D3 Softgels", "Fish Oil", "Whey Protein Powder",
              "Collagen Peptides", "Magnesium Gummies"),
             ("Adult", "Extra Strength", "Women's", "Men's", "Unflavored", "Chocolate"),
             ("60 Count", "120 Count", "2 lb", "5 lb"), (7.0, 75.0)),
    )),
    Branch("Office Products", "office-products", (
        Leaf("Office Supplies", "office-supplies",
             ("Post-it", "BIC", "Sharpie", "Moleskine", "Swingline", "Avery"),
             ("Sticky Notes", "Ballpoint Pens", "Permanent Markers", "Hardcover Notebook", "Stapler",
              "Shipping Labels", "Desk Organizer", "Picture Frame"),
             ("Assorted Colors", "Fine Point", "Classic", "Heavy Duty", "Ruled", "16x24"),
             ("Pack of 12", "", "Pack of 60", "2 Pack"), (2.0, 60.0)),
    )),
)

FIRST_NAMES = (
    "Olivia", "Liam", "Ava", "Noah", "Sophia", "Mason", "Isabella", "Ethan", "Mia", "Lucas", "Amelia",
    "James", "Harper", "Benjamin", "Charlotte", "Jacob", "Grace", "Daniel", "Chloe", "Henry", "Hannah",
    "Samuel", "Lily", "David", "Sarah", "Michael", "Jane", "John", "Emily", "Alex", "Julia", "Ryan",
    "Nora", "Adam", "Lisa", "Kevin", "Priya", "Wei", "Carlos", "Fatima",
)
LAST_NAMES = (
    "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Martinez", "Lee",
    "Walker", "Hall", "Allen", "Young", "King", "Wright", "Scott", "Green", "Baker", "Adams", "Nelson",
    "Hill", "Campbell", "Mitchell", "Roberts", "Carter", "Phillips", "Evans", "Turner", "Torres",
    "Parker", "Collins", "Chen", "Patel", "Nguyen", "Kim", "Lim", "Potter", "Miller", "Rossi",
)
CITIES = (
    ("Chicago", "Illinois", "606"), ("Austin", "Texas", "787"), ("Seattle", "Washington", "981"),
    ("Denver", "Colorado", "802"), ("Boston", "Massachusetts", "021"), ("Miami", "Florida", "331"),
    ("Phoenix", "Arizona", "850"), ("Portland", "Oregon", "972"), ("Atlanta", "Georgia", "303"),
    ("Pittsburgh", "Pennsylvania", "152"), ("New York", "New York", "100"), ("San Diego", "California", "921"),
)
STREETS = ("Oak Street", "Maple Avenue", "Pine Road", "Cedar Lane", "Elm Street", "Washington Blvd",
           "Lake View Drive", "Hillcrest Road", "Sunset Avenue", "Park Place", "River Road", "Main Street")
REGIONS = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
    "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky",
    "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi", "Missouri",
    "Montana", "Nebraska", "Nevada", "New Hampshire", "New Jersey", "New Mexico", "New York",
    "North Carolina", "North Dakota", "Ohio", "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island",
    "South Carolina", "South Dakota", "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington",
    "West Virginia", "Wisconsin", "Wyoming",
)
REGION_CODES = dict(zip(
    ("AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND "
     "OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY").split(), REGIONS))

# Review text by sentiment band: (titles, sentences).
REVIEW_TEXT: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "good": (
        ("Love it!", "Exactly what I needed", "Great value", "Highly recommend", "Five stars", "Works great"),
        ("Works exactly as described and arrived quickly.", "The quality is much better than I expected for the price.",
         "I bought a second one for my sister.", "Color and style are really nice.",
         "Easy to use and feels sturdy.", "Would definitely buy again.", "My whole family likes it."),
    ),
    "mixed": (
        ("It's okay", "Decent for the price", "Not bad", "Some pros and cons"),
        ("It does the job but the packaging was damaged.", "Smaller than I expected.",
         "Quality is fine, shipping took a while.", "Good, but the instructions were confusing.",
         "Runs a little small, order one size up."),
    ),
    "bad": (
        ("Disappointed", "Broke quickly", "Not as advertised", "Would not buy again", "Poor quality"),
        ("I was disappointed with the quality.", "It stopped working after two weeks.",
         "The material feels cheap and thin.", "Not suitable for daily use.",
         "It broke after three days of use.", "Customer service never answered my email."),
    ),
}

SEARCH_TERMS = (
    "hollister", "joust bag", "antonia racer tank", "nike", "yoga mat", "headphones", "chairs",
    "usb wifi", "phone case", "coffee", "tent", "laundry detergent", "protein", "mattress", "sneakers",
    "hoodie", "switch case", "ps4 controller", "xbox", "notebook", "vitamin d", "sunscreen", "skillet",
    "shoe rack", "granola", "tea", "blender", "backpack", "mouse", "charger",
)
