"""Realistic source the scenarios edit: a person's files and the code agents write into them."""

from __future__ import annotations

# -- Python: an order service the person wrote ------------------------------------

SERVICE_PY = '''\
"""Order service: loading, validating and pricing orders."""

import json
import logging
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

TAX_RATE = 0.2


@dataclass
class Order:
    id: str
    items: list = field(default_factory=list)
    customer: str | None = None


def load_order(raw):
    data = json.loads(raw)
    if not data:
        return None
    return Order(id=data["id"], items=data.get("items", []))


def validate(order):
    # TODO: validate the order
    pass


def total(order):
    return None


def main(argv):
    for path in argv:
        with open(path) as fh:
            order = load_order(fh.read())
        if order is None:
            continue
        logger.info("order %s: %s", order.id, total(order))
    return 0
'''

VALIDATE_STUB = "    # TODO: validate the order\n    pass"

VALIDATE_BODY = """\
    if not order.id:
        raise ValueError("order has no id")
    if not order.items:
        raise ValueError("order has no items")

    seen = set()
    for item in order.items:
        sku = item.get("sku")
        if sku is None:
            raise ValueError("item without sku")
        if sku in seen:
            raise ValueError(f"duplicate sku {sku}")
        seen.add(sku)
        if item.get("qty", 0) <= 0:
            raise ValueError(f"bad quantity for {sku}")
    return None"""

VALIDATE_BODY_SMALL = """\
    if not order.id:
        raise ValueError("order has no id")
    if not order.items:
        raise ValueError("order has no items")
    return None"""

TOTAL_STUB = "def total(order):\n    return None"

TOTAL_FUNC = """\
def total(order):
    subtotal = 0
    for item in order.items:
        price = item["price"] * item.get("qty", 1)
        if item.get("discount"):
            price -= price * item["discount"]
        subtotal += price

    tax = round(subtotal * TAX_RATE, 2)
    logger.debug("order %s subtotal=%s tax=%s", order.id, subtotal, tax)
    return round(subtotal + tax, 2)"""

REFUND_FUNC = '''


def refund(order, sku, reason=None):
    """Take one line off an order and say how much goes back."""
    for index, item in enumerate(order.items):
        if item.get("sku") != sku:
            continue
        amount = item["price"] * item.get("qty", 1)
        del order.items[index]
        logger.info("refund %s on %s: %s (%s)", sku, order.id, amount, reason or "-")
        return round(amount * (1 + TAX_RATE), 2)
    return None'''

# -- Python: a small retry helper a session writes as a new file ------------------

RETRY_PY = '''\
"""Retry a flaky call with exponential back-off."""

import logging
import random
import time

logger = logging.getLogger(__name__)


class RetryError(Exception):
    """Every attempt failed; the last error is the cause."""


def retry(fn, attempts=5, base_delay=0.1, max_delay=5.0, retry_on=(OSError,)):
    if attempts < 1:
        raise ValueError("attempts must be at least 1")

    last = None
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except retry_on as exc:
            last = exc
            if attempt == attempts:
                break
            delay = min(max_delay, base_delay * 2 ** (attempt - 1))
            delay *= 0.5 + random.random() / 2
            logger.warning("attempt %d failed (%s); retrying in %.2fs", attempt, exc, delay)
            time.sleep(delay)

    raise RetryError(f"gave up after {attempts} attempts") from last


def retrying(**options):
    """Decorator form of retry()."""

    def wrap(fn):
        def inner(*args, **kwargs):
            return retry(lambda: fn(*args, **kwargs), **options)

        return inner

    return wrap
'''

RETRY_PY_SMALL = '''\
"""Retry a flaky call."""

import time


def retry(fn, attempts=3, delay=0.1):
    last = None
    for _ in range(attempts):
        try:
            return fn()
        except OSError as exc:
            last = exc
            time.sleep(delay)
    raise RuntimeError("gave up") from last
'''

# -- Python: text helpers a session writes, later renamed --------------------------

STRINGS_PY = '''\
"""String helpers for slugs and previews."""

import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")


def slugify(text, max_length=60):
    if not text:
        return ""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _NON_WORD.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > max_length:
        slug = slug[:max_length].rstrip("-")
    return slug


def preview(text, width=80, placeholder="..."):
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: width - len(placeholder)]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut + placeholder


def is_blank(text):
    return text is None or not text.strip()
'''

# -- Python: a person's config module with lines agents repeat ---------------------

CONFIG_PY = '''\
"""Settings, read once from the environment."""

import logging
import os

logger = logging.getLogger(__name__)


def env_int(name, default):
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        logger.warning("ignoring %s=%r: not a number", name, raw)
        return default


def env_flag(name):
    raw = os.environ.get(name)
    if raw is None:
        return None
    return raw.lower() in ("1", "true", "yes")
'''

ENV_FLOAT_FUNC = """


def env_float(name, default):
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        logger.warning("ignoring %s=%r: not a number", name, raw)
        return default


def env_list(name, sep=","):
    raw = os.environ.get(name)
    if raw is None:
        return None
    return [part.strip() for part in raw.split(sep) if part.strip()]"""

# -- Python: an HTTP client the person wrote; an agent edit they revert ------------

CLIENT_PY = '''\
"""A thin HTTP client for the billing API."""

import json
import urllib.request

BASE_URL = "https://billing.example.com/v1"
TIMEOUT = 10


def get(path, token):
    request = urllib.request.Request(BASE_URL + path)
    request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return json.loads(response.read())


def post(path, token, payload):
    body = json.dumps(payload).encode()
    request = urllib.request.Request(BASE_URL + path, data=body, method="POST")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return json.loads(response.read())
'''

GET_ORIGINAL = """\
def get(path, token):
    request = urllib.request.Request(BASE_URL + path)
    request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return json.loads(response.read())"""

GET_AGENT = """\
def get(path, token, params=None):
    url = BASE_URL + path
    if params:
        url += "?" + urllib.parse.urlencode(sorted(params.items()))
    request = urllib.request.Request(url)
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Accept", "application/json")
    with urllib.request.urlopen(request, timeout=TIMEOUT * 3) as response:
        return json.loads(response.read())"""

# -- JavaScript: a cart module (2-space indentation) -------------------------------

CART_JS = """\
'use strict';

const DEFAULT_CURRENCY = 'EUR';

function formatPrice(amount, currency) {
  if (amount == null) {
    return '';
  }
  return `${amount.toFixed(2)} ${currency || DEFAULT_CURRENCY}`;
}

function emptyCart() {
  return { items: [], currency: DEFAULT_CURRENCY };
}

module.exports = { formatPrice, emptyCart };
"""

CART_EXPORTS = "module.exports = { formatPrice, emptyCart };"
CART_EXPORTS_NEW = "module.exports = { formatPrice, emptyCart, addItem, removeItem, cartTotal };"

CART_ADD_FUNCS = """\
function addItem(cart, item) {
  if (!item || !item.sku) {
    throw new Error('item needs a sku');
  }

  const existing = cart.items.find((line) => line.sku === item.sku);
  if (existing) {
    existing.qty += item.qty || 1;
  } else {
    cart.items.push({ sku: item.sku, price: item.price, qty: item.qty || 1 });
  }

  return cart;
}

function removeItem(cart, sku) {
  const index = cart.items.findIndex((line) => line.sku === sku);
  if (index === -1) {
    return null;
  }
  const [removed] = cart.items.splice(index, 1);
  return removed;
}

function cartTotal(cart) {
  let sum = 0;
  for (const line of cart.items) {
    sum += line.price * line.qty;
  }
  return sum;
}

"""

CART_ADD_FUNCS_SMALL = """\
function addItem(cart, item) {
  if (!item) {
    return null;
  }

  cart.items.push(item);
  return cart;
}

function removeItem(cart, sku) {
  cart.items = cart.items.filter((line) => line.sku !== sku);
  return cart;
}

function cartTotal(cart) {
  return cart.items.length;
}

"""

# A second session reworks cartTotal and adds discounts.
CART_TOTAL_OLD = """\
function cartTotal(cart) {
  let sum = 0;
  for (const line of cart.items) {
    sum += line.price * line.qty;
  }
  return sum;
}"""

CART_TOTAL_OLD_SMALL = """\
function cartTotal(cart) {
  return cart.items.length;
}"""

CART_TOTAL_NEW = """\
function cartTotal(cart, discounts = {}) {
  let sum = 0;
  for (const line of cart.items) {
    const rate = discounts[line.sku] || 0;
    sum += line.price * line.qty * (1 - rate);
  }
  return Math.round(sum * 100) / 100;
}

function applyCoupon(cart, coupon) {
  if (!coupon || coupon.expired) {
    return cart;
  }

  const discounts = {};
  for (const line of cart.items) {
    if (coupon.skus.includes(line.sku)) {
      discounts[line.sku] = coupon.rate;
    }
  }
  return { ...cart, discounts };
}"""

# -- JavaScript: an event bus with many braces and blank lines ---------------------

EVENTS_JS = """\
'use strict';

class EventBus {
  constructor() {
    this.handlers = new Map();
  }

  on(name, handler) {
    if (!this.handlers.has(name)) {
      this.handlers.set(name, []);
    }
    this.handlers.get(name).push(handler);
  }
}

module.exports = { EventBus };
"""

EVENTS_ANCHOR = """\
    this.handlers.get(name).push(handler);
  }
}"""

EVENTS_METHODS = """\
    this.handlers.get(name).push(handler);
  }

  off(name, handler) {
    const list = this.handlers.get(name);
    if (!list) {
      return;
    }

    const index = list.indexOf(handler);
    if (index !== -1) {
      list.splice(index, 1);
    }
  }

  emit(name, ...args) {
    const list = this.handlers.get(name) || [];
    for (const handler of [...list]) {
      try {
        handler(...args);
      } catch (err) {
        console.error(`handler for ${name} failed`, err);
      }
    }

    return list.length;
  }

  once(name, handler) {
    const wrapper = (...args) => {
      this.off(name, wrapper);
      handler(...args);
    };
    this.on(name, wrapper);
  }
}"""

EVENTS_METHODS_SMALL = """\
    this.handlers.get(name).push(handler);
  }

  off(name, handler) {
    const list = this.handlers.get(name);
    if (!list) {
      return;
    }

    list.splice(list.indexOf(handler), 1);
  }
}"""


def reindent(text: str, old: int = 2, new: int = 4) -> str:
    """What a formatter does to indentation: every ``old``-space level becomes ``new`` spaces."""
    out = []
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        width = len(line) - len(stripped)
        out.append(" " * (width // old * new + width % old) + stripped)
    return "\n".join(out)


# -- Lines that repeat across owners ------------------------------------------------

ENV_PATH_FUNC = """


def env_path(name, default=None):
    raw = os.environ.get(name)
    if raw is None:
        return default
    return os.path.expanduser(raw)"""

FIND_LINE_JS = """\
function findLine(cart, sku) {
  const index = cart.items.findIndex((line) => line.sku === sku);
  if (index === -1) {
    return null;
  }
  return cart.items[index];
}

"""

REMOVE_LINE_JS = """\
function removeLine(cart, sku) {
  const index = cart.items.findIndex((line) => line.sku === sku);
  if (index === -1) {
    return null;
  }
  return cart.items.splice(index, 1)[0];
}

"""


def retry_v2(text: str) -> str:
    """A second session's rewrite of RETRY_PY: new defaults, jitter off by default, a helper."""
    text = text.replace(
        "def retry(fn, attempts=5, base_delay=0.1, max_delay=5.0, retry_on=(OSError,)):",
        "def retry(fn, attempts=4, base_delay=0.2, max_delay=10.0, retry_on=(OSError,), jitter=False):",
    )
    text = text.replace(
        "            delay *= 0.5 + random.random() / 2\n",
        "            if jitter:\n                delay *= 0.5 + random.random() / 2\n",
    )
    text = text.replace(
        """    raise RetryError(f"gave up after {attempts} attempts") from last\n""",
        """    raise RetryError(f"gave up after {attempts} attempts") from last\n\n\n"""
        """def backoff_delays(attempts, base_delay=0.2, max_delay=10.0):\n"""
        '''    """The delays retry() would sleep, without jitter."""\n'''
        """    return [min(max_delay, base_delay * 2**i) for i in range(attempts - 1)]\n""",
    )
    return text


def large_module(n: int) -> str:
    """A person's long module: ``n`` small handlers, many alike (for git's and difflib's diffs)."""
    parts = [
        '"""Message handlers — one per event kind (généré à la main)."""',
        "",
        "import logging",
        "",
    ]
    parts.append("logger = logging.getLogger(__name__)")
    for i in range(n):
        parts += [
            "",
            "",
            f"def handle_event_{i}(event):",
            f'    """Handle event kind {i}."""',
            "    if event is None:",
            "        return None",
            f'    logger.debug("event {i}: %s", event)',
            f'    return {{"kind": {i}, "ok": True}}',
        ]
    return "\n".join(parts) + "\n"


def large_edit(i: int) -> tuple[str, str]:
    """An agent's rewrite of handler ``i``'s last line (validation, Unicode messages)."""
    old = f'    return {{"kind": {i}, "ok": True}}'
    new = (
        f"    if not isinstance(event, dict):\n"
        f'        raise TypeError("événement {i}: attendu un dict → reçu %r" % type(event))\n'
        f'    payload = event.get("payload") or {{}}\n'
        f"    if not payload:\n"
        f"        return None\n"
        f'    return {{"kind": {i}, "ok": True, "size": len(payload)}}'
    )
    return old, new
