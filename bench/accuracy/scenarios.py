"""The scripted scenarios: each builds one repository and says which blames to check.

A scenario is ``fn(sim, small)``; ``small`` trims the code it writes (the
pytest version), never the kind of change it makes.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

import snippets as C  # bench/accuracy/snippets.py (this directory is on sys.path)
from sim import Sim

MINUTE = 60
HOUR = 3600

SERVICE = "orders/service.py"
CART = "web/cart.js"


@dataclass(frozen=True)
class Scenario:
    name: str
    about: str
    build: Callable[[Sim, bool], None]


SCENARIOS: dict[str, Scenario] = {}


def scenario(about: str) -> Callable[[Callable[[Sim, bool], None]], Callable[[Sim, bool], None]]:
    def register(fn: Callable[[Sim, bool], None]) -> Callable[[Sim, bool], None]:
        SCENARIOS[fn.__name__] = Scenario(fn.__name__, about, fn)
        return fn

    return register


def _service_base(sim: Sim) -> None:
    sim.person_write(SERVICE, C.SERVICE_PY)
    sim.commit("Order service skeleton")
    sim.advance(HOUR)


def _validate(small: bool) -> str:
    return C.VALIDATE_BODY_SMALL if small else C.VALIDATE_BODY


def _cart_with_agent_funcs(sim: Sim, small: bool, label: str = "cart-functions") -> None:
    sim.person_write(CART, C.CART_JS)
    sim.commit("Cart helpers")
    sim.advance(HOUR)
    s = sim.session(label, "Add addItem, removeItem and cartTotal to web/cart.js")
    s.view(CART)
    funcs = C.CART_ADD_FUNCS_SMALL if small else C.CART_ADD_FUNCS
    s.replace(CART, C.CART_EXPORTS, funcs + C.CART_EXPORTS_NEW)
    s.run("npx jest web", 0, "Tests: 6 passed, 6 total")
    s.say("Added the three cart functions and exported them.")


# -- the scenarios ----------------------------------------------------------------


@scenario("agent edits a file, the person commits 20 minutes later")
def agent_writes_person_commits(sim: Sim, small: bool) -> None:
    _service_base(sim)
    s = sim.session("implement-validation", "Implement validate() and total().")
    s.view(SERVICE)
    s.replace(SERVICE, C.VALIDATE_STUB, _validate(small))
    if not small:
        s.replace(SERVICE, C.TOTAL_STUB, C.TOTAL_FUNC)
    s.run("python -m pytest -q tests/test_service.py", 0, "4 passed in 0.12s")
    sim.advance(20 * MINUTE)
    sim.commit("Validate and price orders")
    sim.expect(SERVICE)
    sim.expect(SERVICE, "HEAD")


@scenario("the person changes some of the agent's lines before committing")
def person_tweaks_agent_lines(sim: Sim, small: bool) -> None:
    _service_base(sim)
    s = sim.session("validation-and-refund", "Implement validate() and add a refund().")
    s.replace(SERVICE, C.VALIDATE_STUB, _validate(small))
    s.replace(SERVICE, "    return 0", "    return 0" + C.REFUND_FUNC)
    sim.advance(15 * MINUTE)
    sim.person_edit(
        SERVICE, 'raise ValueError("order has no id")', 'raise ValueError("missing id")'
    )
    sim.person_edit(
        SERVICE,
        "        return round(amount * (1 + TAX_RATE), 2)",
        '        return 0 if reason == "fraud" else round(amount * (1 + TAX_RATE), 2)',
    )
    if not small:
        sim.person_edit(SERVICE, "        if sku in seen:", "        if sku in seen:  # dup")
    sim.commit("Validation and refunds")
    sim.expect(SERVICE)


@scenario("two sessions edit one file; the second rewrites part of the first's code")
def two_sessions_one_file(sim: Sim, small: bool) -> None:
    _cart_with_agent_funcs(sim, small, "cart-functions")
    sim.advance(10 * MINUTE)
    sim.commit("Cart: add, remove, total")
    sim.advance(2 * HOUR)
    b = sim.session("coupons", "Support per-sku discounts and coupons in the cart.")
    old = C.CART_TOTAL_OLD_SMALL if small else C.CART_TOTAL_OLD
    b.multi_replace(
        CART,
        [
            (old, C.CART_TOTAL_NEW),
            ("cartTotal };", "cartTotal, applyCoupon };"),
        ],
    )
    sim.advance(5 * MINUTE)
    sim.commit("Cart: coupons")
    sim.expect(CART)
    sim.expect(CART, "HEAD~1")  # before the second session


@scenario("three agents edit one file (Antigravity, Claude Code, Codex): the latest write wins")
def three_agents_one_file(sim: Sim, small: bool) -> None:
    _cart_with_agent_funcs(sim, small, "cart-functions")  # Antigravity (or DEJA_BENCH_AGENT)
    sim.advance(10 * MINUTE)
    sim.commit("Cart: add, remove, total")
    sim.advance(2 * HOUR)
    old = C.CART_TOTAL_OLD_SMALL if small else C.CART_TOTAL_OLD
    claude = sim.session(
        "claude-coupons", "Support coupons in the cart total.", agent="claude-code"
    )
    claude.view(CART)
    claude.replace(CART, old, C.CART_TOTAL_NEW)
    sim.advance(5 * MINUTE)
    sim.commit("Cart: coupons")
    sim.advance(HOUR)
    codex = sim.session("codex-export", "Export applyCoupon from the cart module.", agent="codex")
    codex.view(CART)
    codex.replace(CART, "cartTotal };", "cartTotal, applyCoupon };")
    codex.run("npm test")
    sim.advance(5 * MINUTE)
    sim.commit("Cart: export applyCoupon")
    sim.expect(CART)
    sim.expect(CART, "HEAD~1")
    sim.expect(CART, "HEAD~2")


@scenario("a formatter reindents the agent's code 2 -> 4 spaces; the person commits")
def formatter_reindent(sim: Sim, small: bool) -> None:
    _cart_with_agent_funcs(sim, small)
    sim.advance(5 * MINUTE)
    sim.person_rewrite(CART, C.reindent)
    sim.commit("Cart functions (formatted)")
    sim.expect(CART)


@scenario("the agent writes and commits a file; the person renames it (git mv) later")
def rename_after_commit(sim: Sim, small: bool) -> None:
    sim.person_write("README.md", "# shop\n\nA small shop.\n")
    sim.commit("Start")
    sim.advance(HOUR)
    s = sim.session("string-helpers", "Add slugify and preview helpers.")
    s.write_file("textutil/strings.py", C.STRINGS_PY)
    s.run("git add textutil/strings.py && git commit -m 'String helpers'", 0, "1 file changed")
    sim.commit("String helpers")
    sim.advance(3 * HOUR)
    sim.git_mv("textutil/strings.py", "common/text.py")
    if not small:
        sim.person_edit("README.md", "A small shop.", "A small shop. Helpers live in common/.")
    sim.commit("Move string helpers to common/")
    sim.expect("common/text.py")
    sim.expect("common/text.py", "HEAD")


@scenario("the agent's function is moved to the end of the file by the person")
def moved_block(sim: Sim, small: bool) -> None:
    _service_base(sim)
    s = sim.session("pricing", "Implement total() and add refund() right after it.")
    body = C.TOTAL_FUNC + C.REFUND_FUNC
    if small:
        body = C.TOTAL_STUB + C.REFUND_FUNC
    s.replace(SERVICE, C.TOTAL_STUB, body)
    sim.advance(10 * MINUTE)
    sim.commit("Pricing and refunds")
    sim.advance(HOUR)
    refund = C.REFUND_FUNC.lstrip("\n")
    sim.person_move(SERVICE, "\n\n" + refund)
    sim.commit("Keep refund() last")
    sim.expect(SERVICE)


@scenario("the agent writes lines identical to lines the person wrote earlier")
def identical_to_human_line(sim: Sim, small: bool) -> None:
    sim.person_write("app/config.py", C.CONFIG_PY)
    sim.person_write("app/client.py", C.CLIENT_PY)
    sim.commit("Config and client")
    sim.advance(2 * HOUR)
    s = sim.session("env-helpers", "Add env_float and env_list next to env_int.")
    s.view("app/config.py")
    func = C.ENV_FLOAT_FUNC
    if small:
        func = func.split("\n\n\ndef env_list")[0]
    s.replace(
        "app/config.py",
        '    return raw.lower() in ("1", "true", "yes")',
        '    return raw.lower() in ("1", "true", "yes")' + func,
    )
    if not small:
        # the same Authorization line the person wrote twice in client.py
        s.replace(
            "app/client.py",
            "def post(path, token, payload):",
            'def delete(path, token):\n    request = urllib.request.Request(BASE_URL + path, method="DELETE")\n'
            '    request.add_header("Authorization", f"Bearer {token}")\n'
            "    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:\n"
            "        return response.status\n\n\ndef post(path, token, payload):",
        )
    sim.advance(30 * MINUTE)
    sim.commit("More env helpers")
    sim.expect("app/config.py")
    if not small:
        sim.expect("app/client.py")


@scenario("the person reverts one agent edit before committing and keeps another")
def agent_edit_reverted(sim: Sim, small: bool) -> None:
    sim.person_write("billing/client.py", C.CLIENT_PY)
    sim.commit("Billing client")
    sim.advance(HOUR)
    s = sim.session("client-params", "Let get() take query params; raise the timeout.")
    s.replace("billing/client.py", C.GET_ORIGINAL, C.GET_AGENT)
    s.replace("billing/client.py", "TIMEOUT = 10", "TIMEOUT = 30")
    if not small:
        s.replace(
            "billing/client.py",
            '    request.add_header("Content-Type", "application/json")',
            '    request.add_header("Content-Type", "application/json")\n'
            '    request.add_header("Accept", "application/json")',
        )
    sim.advance(25 * MINUTE)
    sim.person_edit("billing/client.py", C.GET_AGENT, C.GET_ORIGINAL)  # revert get()
    sim.commit("Longer billing timeout")
    sim.expect("billing/client.py")


@scenario("a session edits after the commit that holds the same lines; only its later edit is its")
def session_after_commit(sim: Sim, small: bool) -> None:
    _service_base(sim)
    stale = sim.read(SERVICE)
    sim.person_edit(SERVICE, C.VALIDATE_STUB, _validate(small))
    sim.commit("Validate orders")  # the person's lines, committed before the session
    sim.advance(2 * HOUR)
    s = sim.session("late-session", "Implement validate() and total().")
    # the session works on a stale copy: the same validation, written after the commit
    s.replace(SERVICE, C.VALIDATE_STUB, _validate(small), current=stale, apply=False)
    sim.advance(5 * MINUTE)
    s.replace(SERVICE, C.TOTAL_STUB, C.TOTAL_FUNC)  # a real edit, left uncommitted
    sim.expect(SERVICE)
    sim.expect(SERVICE, "HEAD")


@scenario("a session works in another clone (/some/other/clone/path); its commits arrive by pull")
def other_clone(sim: Sim, small: bool) -> None:
    _service_base(sim)
    s = sim.session(
        "other-clone", "Implement validate() and add a retry helper.", "/some/other/clone/path"
    )
    s.register("cli")
    s.replace(SERVICE, C.VALIDATE_STUB, _validate(small))
    s.write_file("orders/retry.py", C.RETRY_PY_SMALL if small else C.RETRY_PY)
    s.run("git commit -am 'Validation and retry'", 0, "2 files changed")
    sim.advance(3 * HOUR)
    sim.commit("Validation and retry (pulled from the laptop clone)")
    sim.expect(SERVICE)
    sim.expect("orders/retry.py")


@scenario("write_to_file creates a new module; the person commits it")
def write_new_file(sim: Sim, small: bool) -> None:
    sim.person_write("app/__init__.py", "")
    sim.commit("Package")
    sim.advance(HOUR)
    s = sim.session("retry-helper", "Write a retry helper with exponential back-off.")
    s.write_file("app/retry.py", C.RETRY_PY_SMALL if small else C.RETRY_PY)
    s.run("python -c 'import app.retry'", 0)
    sim.advance(10 * MINUTE)
    sim.commit("Retry helper")
    sim.expect("app/retry.py")


@scenario("blank and brace-only lines inside the agent's block, next to the person's braces")
def blank_and_brace_lines(sim: Sim, small: bool) -> None:
    sim.person_write("web/events.js", C.EVENTS_JS)
    sim.commit("Event bus")
    sim.advance(HOUR)
    s = sim.session("event-bus", "Add off, emit and once to the EventBus.")
    s.replace(
        "web/events.js", C.EVENTS_ANCHOR, C.EVENTS_METHODS_SMALL if small else C.EVENTS_METHODS
    )
    sim.advance(10 * MINUTE)
    sim.commit("EventBus: off, emit, once")
    sim.expect("web/events.js")


@scenario("agent lines not committed yet: blame of the working tree (and of HEAD)")
def uncommitted_working_tree(sim: Sim, small: bool) -> None:
    _cart_with_agent_funcs(sim, small)
    sim.advance(10 * MINUTE)
    sim.commit("Cart functions")
    sim.advance(HOUR)
    b = sim.session("coupons-wip", "Add coupons to the cart.")
    old = C.CART_TOTAL_OLD_SMALL if small else C.CART_TOTAL_OLD
    b.replace(CART, old, C.CART_TOTAL_NEW)
    sim.expect(CART)
    sim.expect(CART, "HEAD")


@scenario("the person edits during the session; the transcript reports it as the USER's")
def user_edit_reported(sim: Sim, small: bool) -> None:
    sim.person_write("app/__init__.py", "")
    sim.commit("Package")
    sim.advance(HOUR)
    s = sim.session("retry-with-user", "Write a retry helper.")
    s.write_file("app/retry.py", C.RETRY_PY_SMALL if small else C.RETRY_PY)
    sim.advance(2 * MINUTE)
    if small:
        s.user_edit(
            "app/retry.py",
            "def retry(fn, attempts=3, delay=0.1):",
            "def retry(fn, attempts=4, delay=0.2):",
        )
        s.replace(
            "app/retry.py", 'raise RuntimeError("gave up")', 'raise RuntimeError("retry: gave up")'
        )
    else:
        s.user_edit("app/retry.py", "attempts=5, base_delay=0.1", "attempts=3, base_delay=0.2")
        s.replace("app/retry.py", "import time\n", "import time\nfrom functools import wraps\n")
        s.replace("app/retry.py", "        def inner(", "        @wraps(fn)\n        def inner(")
    sim.advance(5 * MINUTE)
    sim.commit("Retry helper")
    sim.expect("app/retry.py")


@scenario("the person hand-writes, in the same commit, lines identical to the agent's")
def person_adds_similar_code(sim: Sim, small: bool) -> None:
    sim.person_write("app/config.py", C.CONFIG_PY)
    sim.commit("Config")
    sim.advance(HOUR)
    s = sim.session("env-float", "Add env_float.")
    func = C.ENV_FLOAT_FUNC.split("\n\n\ndef env_list")[0] if small else C.ENV_FLOAT_FUNC
    anchor = '    return raw.lower() in ("1", "true", "yes")'
    s.replace("app/config.py", anchor, anchor + func)
    sim.advance(20 * MINUTE)
    text = sim.read("app/config.py").rstrip("\n")
    sim.person_write("app/config.py", text + C.ENV_PATH_FUNC + "\n")
    sim.commit("env_float and env_path")
    sim.expect("app/config.py")


@scenario("two sessions write identical lines into one file; one commit holds both")
def two_sessions_identical_lines(sim: Sim, small: bool) -> None:
    sim.person_write(CART, C.CART_JS)
    sim.commit("Cart helpers")
    sim.advance(HOUR)
    a = sim.session("find-line", "Add findLine to the cart.")
    a.replace(CART, C.CART_EXPORTS, C.FIND_LINE_JS + C.CART_EXPORTS)
    sim.advance(30 * MINUTE)
    b = sim.session("remove-line", "Add removeLine to the cart.")
    b.replace(CART, C.CART_EXPORTS, C.REMOVE_LINE_JS + C.CART_EXPORTS)
    if not small:
        b.replace(CART, "emptyCart };", "emptyCart, findLine, removeLine };")
    sim.advance(10 * MINUTE)
    sim.commit("findLine and removeLine")
    sim.expect(CART)


@scenario("a second session rewrites a whole file with write_to_file (Overwrite)")
def overwrite_by_second_session(sim: Sim, small: bool) -> None:
    sim.person_write("app/__init__.py", "")
    sim.commit("Package")
    sim.advance(HOUR)
    original = C.RETRY_PY_SMALL if small else C.RETRY_PY
    a = sim.session("retry-v1", "Write a retry helper.")
    a.write_file("app/retry.py", original)
    sim.advance(10 * MINUTE)
    sim.commit("Retry helper")
    sim.advance(HOUR)
    b = sim.session("retry-v2", "Make jitter optional and expose the delays.")
    b.view("app/retry.py")
    if small:
        rewritten = original.replace("attempts=3, delay=0.1", "attempts=4, delay=0.2")
        rewritten += "\n\nDEFAULT_ATTEMPTS = 4\n"
    else:
        rewritten = C.retry_v2(original)
    b.write_file("app/retry.py", rewritten, overwrite=True)
    sim.advance(10 * MINUTE)
    sim.commit("Retry: optional jitter")
    sim.expect("app/retry.py")
    sim.expect("app/retry.py", "HEAD~1")


@scenario("the person amends the agent's lines into an older commit (author date before the edit)")
def amend_keeps_author_date(sim: Sim, small: bool) -> None:
    sim.person_write(SERVICE, C.SERVICE_PY)
    sim.commit("Order service skeleton")
    sim.advance(HOUR)
    s = sim.session("amended", "Implement validate() properly.")
    s.replace(SERVICE, C.VALIDATE_STUB, _validate(small))
    if not small:
        s.replace(SERVICE, C.TOTAL_STUB, C.TOTAL_FUNC)
    sim.advance(30 * MINUTE)
    sim.commit("", amend=True)  # author date 09:00, the edit at 10:00, committer date 10:30
    sim.expect(SERVICE)
    sim.expect(SERVICE, "HEAD")


@scenario("the agent commits itself seconds after editing, in a +05:30 time zone")
def agent_commits_immediately(sim: Sim, small: bool) -> None:
    sim.person_write(CART, C.CART_JS)
    sim.commit("Cart helpers", tz="+0530")
    sim.advance(HOUR)
    s = sim.session("quick-commit", "Add the cart functions and commit.")
    funcs = C.CART_ADD_FUNCS_SMALL if small else C.CART_ADD_FUNCS
    s.replace(CART, C.CART_EXPORTS, funcs + C.CART_EXPORTS_NEW)
    s.run("git commit -am 'Cart functions'", 0, "1 file changed")
    sim.advance(-1)  # the commit lands while the command step is still running
    sim.commit("Cart functions", tz="+0530")
    sim.expect(CART)
    sim.expect(CART, "HEAD")


@scenario("scattered agent edits in a long, repetitive module (with non-ASCII text)")
def large_file(sim: Sim, small: bool) -> None:
    n = 12 if small else 60
    sim.person_write("app/handlers.py", C.large_module(n))
    sim.commit("Handlers")
    sim.advance(HOUR)
    s = sim.session("validate-handlers", "Validate payloads in a few handlers.")
    for i in (2, 7) if small else (3, 17, 18, 41, 59):
        old, new = C.large_edit(i)
        s.replace("app/handlers.py", old, new)
    sim.advance(20 * MINUTE)
    sim.commit("Validate handler payloads")
    sim.expect("app/handlers.py")


@scenario("a file whose path has spaces (file:// URIs percent-encoded)")
def path_with_spaces(sim: Sim, small: bool) -> None:
    sim.person_write("docs/user guide/README.md", "# Guide\n")
    sim.commit("Guide")
    sim.advance(HOUR)
    s = sim.session("spaces", "Add an example script to the user guide.")
    s.write_file("docs/user guide/example retry.py", C.RETRY_PY_SMALL if small else C.RETRY_PY)
    s.replace("docs/user guide/README.md", "# Guide", "# Guide\n\nSee `example retry.py`.")
    sim.advance(10 * MINUTE)
    sim.commit("Guide example")
    sim.expect("docs/user guide/example retry.py")
    sim.expect("docs/user guide/README.md")


@scenario("the person deletes the agent's function, then restores it from history")
def restored_from_history(sim: Sim, small: bool) -> None:
    _service_base(sim)
    s = sim.session("restored", "Implement validate() and add refund().")
    s.replace(SERVICE, C.VALIDATE_STUB, _validate(small))
    s.replace(SERVICE, "    return 0", "    return 0" + C.REFUND_FUNC)
    sim.advance(10 * MINUTE)
    sim.commit("Validation and refunds")
    sim.advance(HOUR)
    sim.person_edit(SERVICE, C.REFUND_FUNC, "")
    sim.commit("Drop refund() for now")
    sim.advance(HOUR)
    sim.checkout(SERVICE, "HEAD~1")
    sim.commit("Bring refund() back")
    sim.expect(SERVICE)


@scenario("a session in an unrelated project wrote common boilerplate at the same relative path")
def unrelated_project_same_path(sim: Sim, small: bool) -> None:
    elsewhere = sim.session(
        "other-project", "Add env helpers to app/config.py.", "/home/u/unrelated-service"
    )
    elsewhere.register("cli")
    elsewhere.write_file("app/config.py", C.CONFIG_PY)
    sim.files.pop("app/config.py")  # that file lives in the other project, not here
    (sim.repo / "app/config.py").unlink()
    sim.advance(2 * HOUR)
    # here, the person writes the same boilerplate by hand, plus their own code
    own = (
        '"""Configuration of the shop service."""\n\nimport logging\nimport os\n\n'
        "logger = logging.getLogger(__name__)" + C.ENV_PATH_FUNC + "\n"
    )
    sim.person_write("app/config.py", own)
    sim.commit("Config")
    sim.advance(HOUR)
    s = sim.session("here", "Add env_float.")
    func = C.ENV_FLOAT_FUNC.split("\n\n\ndef env_list")[0] if small else C.ENV_FLOAT_FUNC
    anchor = "    return os.path.expanduser(raw)"
    s.replace("app/config.py", anchor, anchor + func)
    sim.advance(10 * MINUTE)
    sim.commit("env_float")
    sim.expect("app/config.py")


@scenario("the repository at a path is replaced by another project its sessions never saw")
def project_replaced_at_same_path(sim: Sim, small: bool) -> None:
    # the old project's sessions ran in this very folder and wrote its config module
    old = sim.session("old-project", "Write the settings module.")
    old.write_file("app/config.py", C.CONFIG_PY)
    sim.advance(10 * MINUTE)
    sim.commit("Settings")
    sim.advance(30 * 24 * HOUR)
    sim.replace_repository()
    # another project now: the person writes the same boilerplate by hand
    own = (
        '"""Configuration of the shop service."""\n\nimport logging\nimport os\n\n'
        "logger = logging.getLogger(__name__)" + C.ENV_PATH_FUNC + "\n"
    )
    sim.person_write("app/config.py", own)
    sim.commit("Config")
    sim.advance(HOUR)
    s = sim.session("here", "Add env_float.")
    func = C.ENV_FLOAT_FUNC.split("\n\n\ndef env_list")[0] if small else C.ENV_FLOAT_FUNC
    anchor = "    return os.path.expanduser(raw)"
    s.replace("app/config.py", anchor, anchor + func)
    sim.advance(10 * MINUTE)
    sim.commit("env_float")
    sim.expect("app/config.py")


@scenario("the person deletes an agent's function, then types it back elsewhere later")
def person_retypes_deleted_code(sim: Sim, small: bool) -> None:
    # commit-window evidence: the session's write was committed and gone before
    # the commit that brought the text back, so that commit's author wrote it
    _service_base(sim)
    s = sim.session("refunds", "Add refund().")
    s.replace(SERVICE, "    return 0", "    return 0" + C.REFUND_FUNC)
    sim.advance(10 * MINUTE)
    sim.commit("Refunds")
    sim.advance(HOUR)
    sim.person_edit(SERVICE, C.REFUND_FUNC, "")
    sim.commit("Drop refund()")
    sim.advance(HOUR)
    sim.person_edit(SERVICE, C.VALIDATE_STUB, C.VALIDATE_STUB + "\n" + C.REFUND_FUNC.rstrip("\n"))
    sim.commit("refund() is back, next to validate()")
    sim.expect(SERVICE)


def _refund_written(sim: Sim) -> None:
    """A refunds module of the person's; a session adds refund() to the service."""
    _service_base(sim)
    sim.person_write("orders/refunds.py", '"""Refunds."""\n')
    sim.commit("A module for refunds")
    s = sim.session("refunds", "Add refund() to the service.")
    s.replace(SERVICE, "    return 0", "    return 0" + C.REFUND_FUNC)
    sim.advance(10 * MINUTE)


@scenario("the person moves an agent's function to another file")
def moved_to_another_file(sim: Sim, small: bool) -> None:
    _refund_written(sim)
    sim.commit("Refunds")
    sim.advance(HOUR)
    _move_refund(sim)
    sim.commit("Move refund() to its module")
    sim.expect("orders/refunds.py")
    sim.expect(SERVICE)


def _move_refund(sim: Sim) -> None:
    """The person cuts refund() (with its blank lines) and pastes it into refunds.py."""
    lines = sim.files[SERVICE]
    start, end = sim._find_lines(SERVICE, C.REFUND_FUNC[1:])
    moved = lines[start:end]
    sim.files[SERVICE] = lines[:start] + lines[end:]
    sim.files["orders/refunds.py"] = sim.files["orders/refunds.py"] + moved
    for path in (SERVICE, "orders/refunds.py"):
        (sim.repo / path).write_text(sim.read(path), encoding="utf-8")


@scenario("the person adds blank lines and brackets next to an agent's code later")
def late_trivial_lines(sim: Sim, small: bool) -> None:
    _service_base(sim)
    s = sim.session("pricing", "Implement total().")
    s.replace(SERVICE, C.TOTAL_STUB, C.TOTAL_FUNC)
    sim.advance(10 * MINUTE)
    sim.commit("Pricing")
    sim.advance(HOUR)
    first = C.TOTAL_FUNC.split("\n")[0]
    sim.person_edit(SERVICE, first, "\n" + first)
    sim.person_edit(SERVICE, "def total(order):", "def total(\n    order,\n):")
    sim.commit("Spacing")
    sim.advance(HOUR)
    s = sim.session("pricing-2", "Round through a helper.")
    s.replace(
        SERVICE,
        "    return round(subtotal + tax, 2)",
        "    result = round_money(\n        subtotal + tax,\n        places=2,\n    )\n    return result",
    )
    sim.advance(10 * MINUTE)
    sim.commit("round_money")
    sim.advance(HOUR)
    # the person's own call beside the session's, closed by the same ")" line
    sim.person_edit(
        SERVICE,
        "    return result",
        "    audit_total(\n        order.id,\n        result,\n    )\n    return result",
    )
    sim.commit("Audit totals")
    sim.expect(SERVICE)


HELPER = "def clamp(value, low, high):\n    return max(low, min(value, high))\n"


@scenario("an agent in another project wrote a two-line helper a person also wrote here")
def unrelated_project_small_helper(sim: Sim, small: bool) -> None:
    # the other project exists on this machine as its own git repository
    other = sim.workdir / "elsewhere"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / "README").write_text("another project\n")
    subprocess.run(["git", "-C", str(other), "add", "README"], check=True, env=sim.env())
    subprocess.run(["git", "-C", str(other), "commit", "-qm", "x"], check=True, env=sim.env())
    for label, where in (("other-repo", str(other)), ("gone-project", "/home/u/old-tool")):
        s = sim.session(label, "Add a clamp helper to app/util.py.", where)
        s.register("cli")
        s.write_file("app/util.py", HELPER)
        sim.files.pop("app/util.py")  # that file lives in the other project, not here
        (sim.repo / "app/util.py").unlink()
        sim.advance(HOUR)
    sim.person_write("app/util.py", '"""Small helpers."""\n\n\n' + HELPER + "\n\nLIMIT = 10\n")
    sim.commit("Helpers")
    s = sim.session("here", "Add a percent helper.")
    s.replace(
        "app/util.py",
        "LIMIT = 10",
        "LIMIT = 10\n\n\ndef percent(part, whole):\n"
        "    return 100.0 * part / whole if whole else 0.0",
    )
    sim.advance(10 * MINUTE)
    sim.commit("percent()")
    sim.expect("app/util.py")


@scenario("a session writes a new module; the person renames it before the first commit")
def renamed_before_commit(sim: Sim, small: bool) -> None:
    sim.person_write("README.md", "# shop\n")
    sim.commit("Readme")
    s = sim.session("retry", "Write a retry helper module.")
    s.write_file("orders/retry_helpers.py", C.RETRY_PY_SMALL if small else C.RETRY_PY)
    sim.advance(10 * MINUTE)
    (sim.repo / "orders/retry.py").write_text(sim.read("orders/retry_helpers.py"))
    (sim.repo / "orders/retry_helpers.py").unlink()
    sim.files["orders/retry.py"] = sim.files.pop("orders/retry_helpers.py")
    sim.commit("Retry helpers")
    sim.expect("orders/retry.py")


@scenario("a session writes a new module; the person commits other work, then the module renamed")
def renamed_before_a_later_commit(sim: Sim, small: bool) -> None:
    sim.person_write("README.md", "# shop\n")
    sim.commit("Readme")
    s = sim.session("retry", "Write a retry helper module.")
    s.write_file("orders/retry_helpers.py", C.RETRY_PY_SMALL if small else C.RETRY_PY)
    sim.advance(10 * MINUTE)
    # other work is committed first (or the branch is rebased): the module's
    # commit comes after a parent younger than every write of the session
    sim.person_edit("README.md", "# shop\n", "# shop\n\nOrders and retries.\n")
    sim.commit("Readme: what this is")
    sim.advance(10 * MINUTE)
    (sim.repo / "orders/retry.py").write_text(sim.read("orders/retry_helpers.py"))
    (sim.repo / "orders/retry_helpers.py").unlink()
    sim.files["orders/retry.py"] = sim.files.pop("orders/retry_helpers.py")
    sim.commit("Retry helpers")
    sim.expect("orders/retry.py")


@scenario("the person types a session's five lines again at another indent, same commit")
def same_lines_other_indent(sim: Sim, small: bool) -> None:
    block = (
        "total = 0\n"
        "for item in order.items:\n"
        "    total += item.price * item.qty\n"
        "total = round(total, 2)\n"
        "log.info('order %s: %s', order.id, total)\n"
    )

    def indent(n: int) -> str:
        return "".join(" " * n + ln + "\n" for ln in block.splitlines())

    # the person's copy comes first in the file: line order cannot decide
    sim.person_write(
        "orders/settle.py",
        "def audit(batches, log):\n    for batch in batches:\n"
        "        for order in batch:\n            if order.flagged:\n                pass\n"
        "\n\ndef settle(orders, log):\n    for order in orders:\n        if order.open:\n"
        "            pass\n",
    )
    sim.commit("Skeletons")
    sim.advance(HOUR)
    s = sim.session("settle", "Fill in settle().")
    s.replace(
        "orders/settle.py",
        "        if order.open:\n            pass\n",
        "        if order.open:\n" + indent(12),
    )
    sim.advance(5 * MINUTE)
    sim.person_edit(
        "orders/settle.py",
        "            if order.flagged:\n                pass\n",
        "            if order.flagged:\n" + indent(16) + "                    pass\n",
    )
    sim.commit("settle() and audit()")
    sim.expect("orders/settle.py")


def _report_written(sim: Sim, body: str) -> None:
    """A person's report skeleton, then a session's ``build`` (``body``), committed."""
    sim.person_write("app/report.py", '"""Reports."""\n\n\ndef build(rows):\n    return None\n')
    sim.commit("Report skeleton")
    sim.advance(HOUR)
    s = sim.session("report", "Build the report from the rows.")
    s.replace("app/report.py", "def build(rows):\n    return None\n", body)
    sim.advance(10 * MINUTE)
    sim.commit("Report")
    sim.advance(HOUR)


@scenario("a formatter splits a session's long calls over several lines")
def formatter_splits_calls(sim: Sim, small: bool) -> None:
    _report_split(sim)
    sim.expect("app/report.py")


def _report_split(sim: Sim) -> None:
    """A session's report with two long calls; the person's formatter splits the first."""
    _report_written(
        sim,
        "def build(rows):\n"
        "    totals = summarise(rows, keys=('region', 'product'), value='amount', skip_empty=True)\n"
        "    table = render_table(totals, columns=['region', 'product', 'amount'], width=80)\n"
        "    return table\n",
    )
    split = (
        "def build(rows):\n"
        "    totals = summarise(\n"
        "        rows,\n"
        "        keys=('region', 'product'),\n"
        "        value='amount',\n"
        "        skip_empty=True,\n"
        "    )\n"
    )
    sim.person_rewrite(
        "app/report.py",
        lambda text: text.replace(
            "def build(rows):\n"
            "    totals = summarise(rows, keys=('region', 'product'), value='amount', skip_empty=True)\n",
            split.replace("skip_empty=True,\n", "skip_empty=True\n"),
        ),
    )
    sim.commit("Format")


@scenario(
    "a formatter splits a session's long call; later the person changes one argument and puts"
    " another between two"
)
def split_call_changed_later(sim: Sim, small: bool) -> None:
    _report_split(sim)
    sim.advance(24 * HOUR)
    # the pieces no longer join to the session's line; those left are still its own
    sim.person_rewrite(
        "app/report.py",
        lambda text: text.replace("        value='amount',\n", "        value='total',\n").replace(
            "        keys=('region', 'product'),\n",
            "        keys=('region', 'product'),\n        limit=10,\n",
        ),
    )
    sim.commit("Totals of the total column, ten at most")
    sim.expect("app/report.py")


@scenario("a session adds a function; the person moves it to another module before committing")
def moved_before_commit(sim: Sim, small: bool) -> None:
    _refund_written(sim)
    _move_refund(sim)  # git never sees the function where the session wrote it
    sim.commit("Refunds, in their own module")
    sim.expect("orders/refunds.py")
    sim.expect(SERVICE)


@scenario("a session edits a module; the person renames it and rewrites half in one commit")
def renamed_and_rewritten(sim: Sim, small: bool) -> None:
    sim.person_write("README.md", "# shop\n")
    s = sim.session("retry", "Write a retry helper module.")
    s.write_file("orders/retry.py", C.RETRY_PY)
    sim.advance(10 * MINUTE)
    sim.commit("Retry helpers")
    sim.advance(HOUR)
    s = sim.session("retry-cap", "Cap the number of attempts at 10.")
    s.replace(
        "orders/retry.py",
        '        raise ValueError("attempts must be at least 1")\n',
        '        raise ValueError("attempts must be at least 1")\n'
        "    if attempts > 10:\n"
        '        raise ValueError("attempts must be at most 10")\n',
    )
    sim.advance(10 * MINUTE)
    # git mv, then more new code than the module had: git sees a deletion and a new file
    sim.git_mv("orders/retry.py", "orders/resilience.py")
    sim.person_edit("orders/resilience.py", "import logging\n", C.CONFIG_PY + C.STRINGS_PY)
    sim.commit("Resilience module (retry and its settings)")
    sim.expect("orders/resilience.py")


@scenario("a formatter puts each argument of a session's call on its own line, with a comma")
def formatter_adds_trailing_comma(sim: Sim, small: bool) -> None:
    _report_written(
        sim,
        "def build(rows):\n"
        "    totals = summarise(rows, keys=('region', 'product'), value='amount', skip_empty=True)\n"
        "    return render_table(totals)\n",
    )
    # black and ruff: one item a line, and a comma after the last ("magic trailing
    # comma"); the line ending in the added comma is the formatter's
    sim.person_rewrite(
        "app/report.py",
        lambda text: text.replace(
            "    totals = summarise(rows, keys=('region', 'product'), value='amount', skip_empty=True)\n",
            "    totals = summarise(\n"
            "        rows,\n"
            "        keys=('region', 'product'),\n"
            "        value='amount',\n"
            "        skip_empty=True,\n"
            "    )\n",
        ),
    )
    sim.commit("Format")
    sim.expect("app/report.py")


@scenario("prettier puts a session's TypeScript signatures one parameter a line")
def prettier_splits_signatures(sim: Sim, small: bool) -> None:
    path = "src/cli.ts"
    sim.person_write(path, "export interface Cli {\n  run(): void\n}\n")
    sim.commit("The command line's interface")
    sim.advance(HOUR)
    s = sim.session("cli-options", "Declare the option methods of the command line.")
    option = (
        "  option(flags: string, description: string, parse: (value: string) => unknown, "
        "hidden: boolean, group: string, env: string, choices: string[], "
        "fallback?: string | number): this\n"
    )
    required = (
        "  requiredOption(flags: string, summary?: string, defaultValue?: string | boolean): this\n"
    )
    settings = (
        "\nexport interface Settings {\n  defaultValue?: string | boolean\n  env?: string\n}\n"
    )
    s.replace(path, "  run(): void\n}\n", "  run(): void\n" + option + required + "}\n" + settings)
    # the member goes again before the commit: its text is now only the last
    # parameter of requiredOption, which the matcher gives the member's write
    s.replace(path, "{\n  defaultValue?: string | boolean\n", "{\n")
    sim.advance(10 * MINUTE)
    sim.commit("Option methods")
    sim.advance(HOUR)

    def one_a_line(line: str) -> str:  # prettier at print width 72, no trailing comma
        name, _, rest = line.strip().partition("(")
        params, _, tail = rest.rpartition(")")
        parts = re.split(r", (?![^(]*\))", params)
        return f"  {name}(\n" + ",\n".join(f"    {p}" for p in parts) + f"\n  ){tail}\n"

    # ten lines from the first (more than six); the second's last parameter is also a
    # line the session wrote (the Settings member it removed), matched as such
    sim.person_rewrite(
        path,
        lambda text: text.replace(option, one_a_line(option)).replace(
            required, one_a_line(required)
        ),
    )
    sim.commit("Format with prettier")
    sim.expect(path)


FINALIZE_TS = """\
\tconst state = value[DRAFT_STATE]
\tif (!state) {
\t\teach(value, (key, child) =>
\t\t\tfinalizeProperty(scope, state, value, key, child, path)
\t\t)
\t\treturn value
\t}
\tif (state.scope !== scope) return value
\tif (!state.modified) {
\t\tmaybeFreeze(scope, state.base, true)
\t\treturn state.base
\t}
\tif (!state.finalized) {
\t\tstate.finalized = true
\t\tconst result = state.copy
\t\tmaybeFreeze(scope, result, false)
\t\tif (path && scope.patches) {
\t\t\tgeneratePatches(state, path, scope.patches, scope.inversePatches)
\t\t}
\t}
\treturn state.copy
"""


@scenario("prettier splits a session's call that a person made one argument of a longer call")
def prettier_splits_an_argument(sim: Sim, small: bool) -> None:
    path = "src/finalize.ts"
    sim.person_write(
        path,
        "export function finalize(scope: Scope, value: any, path?: Path) {\n\treturn value\n}\n",
    )
    sim.commit("Finalize skeleton")
    sim.advance(HOUR)
    s = sim.session("finalize", "Finalize a draft and every property of a plain object.")
    s.replace(path, "\treturn value\n}\n", FINALIZE_TS + "}\n")
    sim.advance(10 * MINUTE)
    sim.commit("Finalize drafts")
    sim.advance(HOUR)
    # the person adds an argument after the session's call and runs prettier: the call
    # is one item of the list now, its pieces end with a comma the session did not write
    # ("),", the person's)
    sim.person_rewrite(
        path,
        lambda text: text.replace(
            "\t\teach(value, (key, child) =>\n"
            "\t\t\tfinalizeProperty(scope, state, value, key, child, path)\n"
            "\t\t)\n",
            "\t\teach(\n"
            "\t\t\tvalue,\n"
            "\t\t\t(key, child) =>\n"
            "\t\t\t\tfinalizeProperty(\n"
            "\t\t\t\t\tscope,\n"
            "\t\t\t\t\tstate,\n"
            "\t\t\t\t\tvalue,\n"
            "\t\t\t\t\tkey,\n"
            "\t\t\t\t\tchild,\n"
            "\t\t\t\t\tpath\n"
            "\t\t\t\t),\n"
            "\t\t\tstrictIteration\n"
            "\t\t)\n",
        ),
    )
    sim.commit("Strict iteration")
    sim.expect(path)


@scenario("a Claude Code session edits a one-line file (.python-version 3.12 -> 3.13)")
def one_line_file(sim: Sim, small: bool) -> None:
    sim.person_write(".python-version", "3.12\n")
    sim.person_write("app/__init__.py", "")
    sim.commit("Pin Python")
    sim.advance(HOUR)
    s = sim.session("bump-python", "Move the project to Python 3.13.", agent="claude-code")
    s.view(".python-version")
    s.replace(".python-version", "3.12", "3.13")
    sim.advance(5 * MINUTE)
    sim.commit("Python 3.13")
    sim.expect(".python-version")


@scenario("a person's blank line committed at 15:00; a Claude session writes one at 15:22")
def blank_before_later_session(sim: Sim, small: bool) -> None:
    sim.person_write(SERVICE, "def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    sim.commit("Two functions")  # the blank lines are the person's
    sim.advance(22 * MINUTE)
    s = sim.session("helper", "Add a helper after b().", agent="claude-code")
    s.replace(SERVICE, "    return 2\n", "    return 2\n\n\ndef helper_for_totals(x):\n"
              "    return compute_the_total(x)\n")  # fmt: skip
    sim.advance(5 * MINUTE)
    # the person keeps the helper's lines but not its blank lines
    sim.person_edit(SERVICE, "    return 2\n\n\ndef helper", "    return 2\ndef helper")
    sim.commit("Helper")
    sim.expect(SERVICE)


TESTS_A = """\
import pytest

from orders.service import total, validate


@pytest.fixture
def order():
    return {"id": 1, "items": []}


def test_validate_accepts_an_order_with_an_id(order):
    validate(order)


def test_total_of_two_items_with_tax(order):
    order["items"] = [{"sku": "a", "price": 10, "qty": 2}, {"sku": "b", "price": 5, "qty": 1}]
    assert total(order) == 30.0
"""

TESTS_B = """\
import pytest

from orders.service import total, validate


@pytest.fixture
def order():
    return {"id": 1, "items": []}


def test_validate_refuses_an_order_without_an_id():
    with pytest.raises(ValueError):
        validate({"items": []})


def test_total_of_an_empty_order(order):
    assert total(order) == 0
"""


@scenario("a session wrote test scaffolding in one file; weeks later a person writes it in another")
def common_test_lines_elsewhere(sim: Sim, small: bool) -> None:
    _service_base(sim)
    s = sim.session("tests-a", "Write tests for validate() and total().")
    s.write_file("tests/test_a.py", TESTS_A)
    s.run("python -m pytest -q tests/test_a.py", 0, "2 passed in 0.05s")
    sim.advance(10 * MINUTE)
    sim.commit("Service tests")
    sim.advance(21 * 24 * HOUR)
    # the person's own test module, the same imports and fixture as the first (a
    # commit that also touches tests/test_a.py, so git blame -C looks there)
    sim.person_write("tests/test_b.py", TESTS_B)
    sim.person_edit("tests/test_a.py", "def test_validate_accepts", "def test_validate_takes")
    sim.commit("More service tests")
    sim.expect("tests/test_b.py")
    sim.expect("tests/test_a.py")


@scenario(
    "a session wrote test scaffolding to a file nobody committed; weeks later a person writes"
    " it in a new file"
)
def scaffolding_from_a_file_git_never_had(sim: Sim, small: bool) -> None:
    _service_base(sim)
    s = sim.session("scratch-tests", "Try some tests for validate() and total().")
    s.write_file("tests/test_scratch.py", TESTS_A)
    s.run("python -m pytest -q tests/test_scratch.py", 0, "2 passed in 0.05s")
    sim.advance(10 * MINUTE)
    (sim.repo / "tests/test_scratch.py").unlink()  # thrown away: git never has it
    del sim.files["tests/test_scratch.py"]
    sim.person_edit(SERVICE, "    return 0", "    return 0  # empty")
    sim.commit("Note on total()")
    sim.advance(21 * 24 * HOUR)
    # the person's new test module: the same imports and fixture as the scratch file
    sim.person_write("tests/test_b.py", TESTS_B)
    s = sim.session("more-tests", "Add a test of a free item.")
    s.replace("tests/test_b.py", "    assert total(order) == 0\n", "    assert total(order) == 0\n"
              + "\n\ndef test_total_of_a_free_item(order):\n"
              + '    order["items"] = [{"sku": "f", "price": 0, "qty": 3}]\n'
              + "    assert total(order) == 0.0\n")  # fmt: skip
    sim.advance(5 * MINUTE)
    sim.commit("Service tests")
    sim.expect("tests/test_b.py")


HEREDOC_TESTS = """

def test_refund_of_a_missing_sku_is_refused():
    order = {"id": 7, "items": [{"sku": "a", "price": 4, "qty": 1}]}
    with pytest.raises(KeyError):
        refund(order, "zz")
"""

HEREDOC_MODULE = '''\
"""Helpers the service tests share."""


def make_order(*skus, price=3, qty=1):
    items = [{"sku": s, "price": price, "qty": qty} for s in skus]
    return {"id": len(items) + 100, "items": items}
'''

HEREDOC_TAIL = """

def test_total_rounds_to_cents():
    order = make_order("a", "b", price=0.335)
    assert total(order) == round(0.335 * 2 * 1.2, 2)
"""


@scenario("a Claude Code session writes files with shell here documents (cat >>, cd &&, tee -a)")
def heredoc_appends(sim: Sim, small: bool) -> None:
    sim.person_write(
        "tests/test_service.py",
        "import pytest\n\nfrom orders.service import refund, total\n\n\n"
        "def test_nothing_to_refund():\n    assert refund({'id': 1, 'items': []}, 'a') is None\n",
    )
    sim.commit("Service tests")
    sim.advance(HOUR)
    s = sim.session("shell-tests", "Add tests for refunds and totals.", agent="claude-code")
    s.view("tests/test_service.py")
    body = HEREDOC_TESTS
    s.shell_write(
        "tests/test_service.py", body, f"cat >> tests/test_service.py << 'EOF'\n{body}EOF"
    )
    s.shell_write(
        "tests/helpers.py",
        HEREDOC_MODULE,
        f"cd tests && cat > helpers.py <<'EOF'\n{HEREDOC_MODULE}EOF\n",
        append=False,
    )
    if not small:
        s.shell_write(
            "tests/test_service.py",
            HEREDOC_TAIL,
            f"cat <<'EOF' | tee -a tests/test_service.py >/dev/null\n{HEREDOC_TAIL}EOF",
        )
    s.run("python -m pytest -q tests", 0, "3 passed in 0.04s")
    sim.advance(10 * MINUTE)
    sim.commit("Refund and rounding tests")
    sim.expect("tests/test_service.py")
    sim.expect("tests/helpers.py")


SPLIT_TESTS_FIRST = """\
from orders.service import Order, total, validate


def test_total_of_one_item():
    order = Order(id="o-1", items=[{"sku": "a", "price": 10, "qty": 1}])
    validate(order)
    assert total(order) == 12.0
    assert order.items[0]["sku"] == "a"
"""

SPLIT_TESTS_SECOND = """

def test_total_of_two_items():
    order = Order(id="o-1", items=[{"sku": "a", "price": 10, "qty": 1}])
    order.items.append({"sku": "b", "price": 5, "qty": 2})
    validate(order)
    assert total(order) == 24.0
    assert order.items[0]["sku"] == "a"


def test_total_with_a_discount():
    order = Order(id="o-1", items=[{"sku": "a", "price": 10, "qty": 1}])
    order.items[0]["discount"] = 0.5
    validate(order)
    assert total(order) == 6.0
    assert order.items[0]["sku"] == "a"
"""


@scenario("a session's work committed in two commits (the person stages half, then the rest)")
def split_commits(sim: Sim, small: bool) -> None:
    path = "tests/test_totals.py"
    sim.person_write("tests/__init__.py", "")
    sim.commit("Tests folder")
    sim.advance(HOUR)
    s = sim.session("total-tests", "Write tests for total().")
    s.write_file(path, SPLIT_TESTS_FIRST + SPLIT_TESTS_SECOND)
    s.run("python -m pytest -q tests/test_totals.py", 0, "3 passed in 0.03s")
    sim.advance(10 * MINUTE)
    # git add -p: the first test only, then the rest five minutes later
    full = [x.copy() for x in sim.files[path]]
    first = len(SPLIT_TESTS_FIRST.splitlines())
    sim.files[path] = full[:first]
    (sim.repo / path).write_text(sim.read(path), encoding="utf-8")
    sim.commit("Test total() of one item")
    sim.advance(5 * MINUTE)
    sim.files[path] = full
    (sim.repo / path).write_text(sim.read(path), encoding="utf-8")
    sim.commit("Test total() of several items")
    sim.expect(path)


PROTO_JS = """\
'use strict';

function Cart() {
  this.items = [];
}

Cart.prototype.add = function (item) {
  this.items.push(item);
  return this;
};

Cart.prototype.clear = function () {
  this.items = [];
  return this;
};

Cart.prototype.count = function () {
  return this.items.length;
};

module.exports = Cart;
"""


@scenario("a session drops the ';' after two functions, each a one-line edit of only '}'")
def lone_bracket_edits(sim: Sim, small: bool) -> None:
    path = "web/cart_proto.js"
    sim.person_write(path, PROTO_JS)
    sim.commit("Cart prototype")
    sim.advance(HOUR)
    s = sim.session("no-semicolons", "Drop the semicolons after the function expressions.")
    s.view(path)
    # each edit writes one "}" and nothing else: no run, no line of its own beside it
    s.replace(
        path,
        "  return this;\n};\n\nCart.prototype.clear",
        "  return this;\n}\n\nCart.prototype.clear",
    )
    s.replace(
        path,
        "  return this;\n};\n\nCart.prototype.count",
        "  return this;\n}\n\nCart.prototype.count",
    )
    s.replace(
        path,
        "  return this.items.length;\n};\n",
        "  return this.items.length;\n};\n\nCart.prototype.isEmpty = function () {\n"
        "  return this.items.length === 0;\n};\n",
    )  # fmt: skip
    sim.advance(10 * MINUTE)
    # the person drops the last ';' by hand (their own "}" of the same commit) and puts
    # two lines on top: every line of the session's is now two lines lower
    sim.person_edit(
        path, "  return this.items.length === 0;\n};", "  return this.items.length === 0;\n}"
    )
    sim.person_edit(path, "'use strict';\n", "'use strict';\n\nconst assert = require('assert');\n")
    sim.commit("Cart: no semicolons, isEmpty")
    sim.expect(path)


CART_TS = """\
export interface Item {
  sku: string;
  price?: number;
  qty?: number;
}

export class Cart {
  items: Item[];
}
"""

CART_CLASS_JS = """\
'use strict';

class Cart {
  constructor() {
    this.items = [];
  }

  add(item) {
    this.items.push(item);
    return this;
  }
}

module.exports = { Cart };
"""

ADD_DOC = """\
  /**
   * Add an item to the cart, merging the quantities of one sku.
   *
   * Examples:
   *{pad}cart.add({{ sku: 'A1', qty: 2 }});
   *{pad}cart.add({{ sku: 'B2', price: 3 }});
   *
   * @param {{Item}} item - the item to add to the cart
   * @return {{Cart}} the cart itself, for chaining calls
   */
"""


@scenario("a session documents a method in the typings; the person types the same doc in the code")
def doc_copied_between_files(sim: Sim, small: bool) -> None:
    # commander keeps each method's JSDoc twice, in lib/command.js and typings/index.d.ts
    sim.person_write("lib/cart.js", CART_CLASS_JS)
    sim.person_write("typings/cart.d.ts", CART_TS)
    sim.commit("Cart and its typings")
    sim.advance(HOUR)
    s = sim.session("typings-docs", "Document Cart.add in the typings.")
    s.view("typings/cart.d.ts")
    doc = ADD_DOC.format(pad="  ")
    s.replace(
        "typings/cart.d.ts",
        "  items: Item[];\n",
        f"  items: Item[];\n\n{doc}  add(item: Item): this;\n",
    )
    sim.advance(20 * MINUTE)
    # the person types the same paragraph above the code, the examples indented their way
    sim.person_edit(
        "lib/cart.js", "\n  add(item) {", "\n" + ADD_DOC.format(pad="     ") + "  add(item) {"
    )
    sim.commit("Document Cart.add")
    sim.expect("lib/cart.js")
    sim.expect("typings/cart.d.ts")


SPLIT_ONCE_PERSON = """\
from orders.service import Order, total, validate


def test_total_of_one_item():
    order = Order(id="o-1", items=[{"sku": "a", "price": 10, "qty": 1}])
    validate(order)
    assert total(order) == 12.0
"""

SPLIT_ONCE_SESSION_A = """

def test_total_of_a_free_item():
    order = Order(id="o-2", items=[{"sku": "f", "price": 0, "qty": 3}])
    validate(order)
    assert total(order) == 0.0
"""

SPLIT_ONCE_SESSION_B = """

def test_total_rounds_half_cents_up():
    order = Order(id="o-3", items=[{"sku": "h", "price": 0.005, "qty": 1}])
    assert total(order) == 0.01
"""


@scenario("a session's two tests committed apart; one line of the first the file already held")
def split_commits_single_copy(sim: Sim, small: bool) -> None:
    path = "tests/test_totals.py"
    sim.person_write(path, SPLIT_ONCE_PERSON)
    sim.commit("A first test")
    sim.advance(HOUR)
    s = sim.session("more-total-tests", "Add tests for free items and rounding.")
    s.view(path)
    s.replace(path, "    assert total(order) == 12.0\n", "    assert total(order) == 12.0\n"
              + SPLIT_ONCE_SESSION_A + SPLIT_ONCE_SESSION_B)  # fmt: skip
    s.run("python -m pytest -q tests/test_totals.py", 0, "3 passed in 0.03s")
    sim.advance(10 * MINUTE)
    # git add -p: the rounding test first, the free item's test five minutes later;
    # its "validate(order)" (written once) the file held already, in the person's test
    full = [x.copy() for x in sim.files[path]]
    head = len(SPLIT_ONCE_PERSON.splitlines())
    middle = len(SPLIT_ONCE_SESSION_A.splitlines())
    sim.files[path] = full[:head] + full[head + middle :]
    (sim.repo / path).write_text(sim.read(path), encoding="utf-8")
    sim.commit("Test rounding")
    sim.advance(5 * MINUTE)
    sim.files[path] = full
    (sim.repo / path).write_text(sim.read(path), encoding="utf-8")
    sim.commit("Test a free item")
    sim.expect(path)


@scenario("two sessions' tests committed in the other order: the first's repeated lines")
def rebased_repeated_block(sim: Sim, small: bool) -> None:
    path = "tests/test_cart.py"
    sim.person_write(path, REBASED_PERSON)
    sim.commit("A first cart test")
    sim.advance(HOUR)
    s = sim.session("discount-test", "Add a test for the cart's discount.")
    s.view(path)
    s.replace(path, "    assert cart.total() == 0\n", "    assert cart.total() == 0\n" + REBASED_A)
    s.run("python -m pytest -q tests/test_cart.py", 0, "2 passed in 0.02s")
    sim.advance(10 * MINUTE)
    t = sim.session("removal-test", "Add a test for removing an item.")
    t.view(path)
    t.replace(
        path, "def test_empty_cart(tmp_path):\n", REBASED_B + "def test_empty_cart(tmp_path):\n"
    )
    t.run("python -m pytest -q tests/test_cart.py", 0, "3 passed in 0.02s")
    sim.advance(10 * MINUTE)
    # the removal test is committed first (git add -p, or a rebase that reordered the
    # work): the discount test's every write is now older than its commit's parent,
    # and its scaffolding lines (the person's test holds them too) were in that parent
    full = [x.copy() for x in sim.files[path]]
    sim.files[path] = full[: -len(REBASED_A.splitlines())]
    (sim.repo / path).write_text(sim.read(path), encoding="utf-8")
    sim.commit("Test removing an item")
    sim.advance(5 * MINUTE)
    sim.files[path] = full
    (sim.repo / path).write_text(sim.read(path), encoding="utf-8")
    sim.commit("Test the discount")
    sim.expect(path)


REBASED_PERSON = """\
import pytest

from shop.cart import Cart
from tests.helpers import make_store


def test_empty_cart(tmp_path):
    store = make_store(tmp_path)
    cart = Cart(store)
    assert cart.total() == 0
"""

REBASED_A = """\


def test_cart_with_discount(tmp_path):
    store = make_store(tmp_path)
    cart = Cart(store)
    cart.add("apple", price=3.0, quantity=2)
    cart.apply_discount(percent=10)
    assert cart.total() == 5.4
"""

REBASED_B = """\
def test_cart_removes_items(tmp_path):
    store = make_store(tmp_path)
    cart = Cart(store)
    cart.add("pear", price=2.0)
    cart.remove("pear")
    assert not cart.items


"""


@scenario("a session drops the ';' from the bottom up, then adds lines on top of the file")
def lone_brackets_moved_by_later_edits(sim: Sim, small: bool) -> None:
    path = "web/cart_fixed.js"
    sim.person_write(path, PROTO_JS)
    sim.commit("Cart prototype")
    sim.advance(HOUR)
    s = sim.session("semicolons-then-events", "Drop the ';' after the methods; make Cart emit.")
    s.view(path)
    # from the bottom up, as a linter's report lists them: each edit writes one "}"
    s.replace(path, "  return this.items.length;\n};\n", "  return this.items.length;\n}\n")
    s.replace(
        path,
        "  return this;\n};\n\nCart.prototype.count",
        "  return this;\n}\n\nCart.prototype.count",
    )
    # then three lines on top: both brackets are three lines lower than they landed, and
    # the session's nearest other lines (these) were not moved at all
    s.replace(
        path,
        "'use strict';\n",
        "'use strict';\n\nconst { EventEmitter } = require('events');\n"
        "const util = require('util');\n",
    )
    s.replace(
        path,
        "module.exports = Cart;\n",
        "util.inherits(Cart, EventEmitter);\n\nmodule.exports = Cart;\n",
    )
    sim.advance(10 * MINUTE)
    sim.commit("Cart: no semicolons, an emitter")
    sim.expect(path)


CART_JS = """\
'use strict';

function Cart() {
  this.items = [];
}

Cart.prototype.add = function (item) {
  this.items.push(item);
  return this;
};

// Deprecated: use add().
Cart.prototype.push = function (item) {
  return this.add(item);
};

Cart.prototype.clear = function () {
  this.items = [];
  return this;
};

Cart.prototype.count = function () {
  return this.items.length;
};

Cart.prototype.total = function () {
  let sum = 0;
  for (const item of this.items) {
    sum += item.price * (item.quantity || 1);
  }
  return sum;
};

Cart.prototype.empty = function () {
  if (this.items.length === 0) {
    return true;
  }
  return this.items.every((item) => item.quantity === 0);
};

module.exports = Cart;
"""


@scenario(
    "a person deletes a block between a session's bottom-up '};' edits, and trims another '};'"
)
def brackets_below_a_deleted_block(sim: Sim, small: bool) -> None:
    path = "web/cart_trim.js"
    first = sim.session("cart", "Write a Cart with add, push, clear, count, total and empty.")
    first.write_file(path, CART_JS)
    sim.advance(10 * MINUTE)
    sim.commit("Cart")
    sim.advance(HOUR)
    s = sim.session("semicolons", "Drop the ';' after the methods, from the bottom up.")
    s.view(path)
    # from the bottom up, each edit writes one "}": these two land below the block the
    # person deletes next, which no transcript holds, so where they were carried to is
    # five lines below where the commit has them
    for tail in ("module.exports", "Cart.prototype.empty"):
        s.replace(path, f"}};\n\n{tail}", f"}}\n\n{tail}")
    sim.advance(MINUTE)
    sim.person_rewrite(
        path,
        lambda text: text.replace(
            "// Deprecated: use add().\nCart.prototype.push = function (item) {\n"
            "  return this.add(item);\n};\n\n",
            "",
        ),
    )
    sim.advance(MINUTE)
    s.replace(path, "};\n\nCart.prototype.count", "}\n\nCart.prototype.count")
    # the person drops a ';' the session has not reached: the line is still the first
    # session's text, a character less
    sim.person_rewrite(
        path,
        lambda text: text.replace(
            "  return this.items.length;\n};\n", "  return this.items.length;\n}\n"
        ),
    )
    sim.advance(10 * MINUTE)
    sim.commit("Cart: no semicolons, no push")
    sim.expect(path)


@scenario(
    "a pre-commit formatter splits a session's long call: the one-line call was never committed"
)
def formatter_splits_before_commit(sim: Sim, small: bool) -> None:
    path = "app/report.py"
    sim.person_write(path, '"""Reports."""\n\n\ndef build(rows):\n    return None\n')
    sim.commit("Report skeleton")
    sim.advance(HOUR)
    s = sim.session("report", "Build the report from the rows.")
    long_call = "    totals = summarise(rows, keys=('region', 'product'), value='amount', skip_empty=True)\n"
    s.replace(
        path,
        "def build(rows):\n    return None\n",
        "def build(rows):\n" + long_call + "    return render_table(totals)\n",
    )
    sim.advance(10 * MINUTE)
    # the hook formats before the commit is made: git never holds the line as written
    sim.person_rewrite(
        path,
        lambda text: text.replace(
            long_call,
            "    totals = summarise(\n"
            "        rows,\n"
            "        keys=('region', 'product'),\n"
            "        value='amount',\n"
            "        skip_empty=True\n"
            "    )\n",
        ),
    )
    sim.commit("Report")
    sim.expect(path)


STORE_GO = """\
package store

import (
\t"bufio"
\t"os"
)

func Open(path string) (*os.File, error) {
\tf, err := os.Open(path)
\tif err != nil {
\t\treturn nil, err
\t}
\treturn f, nil
}

func Save(path string, data []byte) error {
\tf, err := os.Create(path)
\tif err != nil {
\t\treturn err
\t}
\tw := bufio.NewWriter(f)
\t_, err = w.Write(data)
\tif err != nil {
\t\treturn err
\t}
\terr = w.Flush()
\treturn f.Close()
}
"""

REMOVE_GO = """\
func Remove(path string) error {
\terr := os.Remove(path)
\tif err != nil {
\t\treturn err
\t}
\treturn nil
}

func Exists(path string) bool {
\t_, err := os.Stat(path)
\treturn err == nil
}

func Size(path string) (int64, error) {
\tinfo, err := os.Stat(path)
\tif err != nil {
\t\treturn 0, err
\t}
\treturn info.Size(), nil
}

"""


@scenario(
    "a session adds Go error checks (text the file holds many times); the person adds functions above"
)
def repeated_go_checks_shifted(sim: Sim, small: bool) -> None:
    path = "store/store.go"
    sim.person_write(path, STORE_GO)
    sim.commit("store: Open, Save")
    sim.advance(HOUR)
    s = sim.session("flush-errors", "Check the error of Flush in Save.")
    s.view(path)
    s.replace(
        path,
        "\terr = w.Flush()\n\treturn f.Close()\n",
        "\terr = w.Flush()\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn f.Close()\n",
    )
    sim.advance(10 * MINUTE)
    # before committing, the person adds three functions between Open and Save
    sim.person_edit(path, "func Save(", REMOVE_GO + "func Save(")
    sim.commit("store: Remove, Exists, Size; Save checks Flush")
    sim.expect(path)


LOADERS_PY = """\
from store import Customer, Order


def load_orders(db):
    rows = db.fetch("orders")
    return [Order(**row) for row in rows]


def load_customers(db):
    rows = db.fetch("customers")
    return [Customer(**row) for row in rows]
"""

EMPTY_GUARD = (
    "    if not rows:\n"
    '        log.warning("empty table %s", db.name)\n'
    '        metrics.count("empty_table")\n'
    "        raise EmptyTable(db.name)\n"
)
# more lines than FAR_LINES (lines.py), in the small versions too: the kind of change
COLUMNS = 45


def _columns(n: int) -> str:
    return (
        "COLUMNS = {\n"
        + "".join(f'    "column_{k}": "{k * 7 % 97}",\n' for k in range(n))
        + "}\n\n\n"
    )


@scenario("a session pastes one guard into two functions, then writes a table between them")
def one_guard_two_functions(sim: Sim, small: bool) -> None:
    # Its second paste holds no line of its own (every text is the first paste's); the
    # table it wrote last pushed it 45 lines down: placed by its written place alone,
    # beside the table's, the paste was judged far from its own copy.
    path = "app/loaders.py"
    sim.person_write(path, LOADERS_PY)
    sim.commit("Loaders")
    sim.advance(HOUR)
    s = sim.session("empty-guards", "Fail loudly when a table is empty; document the columns.")
    s.view(path)
    for table in ("orders", "customers"):
        s.replace(
            path,
            f'    rows = db.fetch("{table}")\n',
            f'    db.check_schema("{table}")\n    rows = db.fetch("{table}")\n',
        )
    s.replace(
        path,
        '    rows = db.fetch("orders")\n',
        '    rows = db.fetch("orders")\n    # an empty orders table means the import failed\n'
        + EMPTY_GUARD,
    )
    s.replace(
        path,
        '    rows = db.fetch("customers")\n    return [Customer',
        '    rows = db.fetch("customers")\n' + EMPTY_GUARD + "    return [Customer",
    )
    s.replace(
        path,
        "def load_customers(db):\n",
        _columns(COLUMNS) + "def load_customers(db):\n",
    )
    s.run("python -m pytest -q", 0, "4 passed in 0.05s")
    sim.advance(10 * MINUTE)
    sim.commit("Empty tables fail; the columns documented")
    sim.expect(path)


@scenario("a session makes one edit twice, in two functions far apart (identical edits)")
def one_edit_twice(sim: Sim, small: bool) -> None:
    # The two pastes of the guard are identical edits (twins): the latest landed in the
    # second function; the first function's copy, far from it, was turned away before
    # the other paste, which landed there, was tried.
    path = "app/loaders.py"
    columns = _columns(COLUMNS)
    sim.person_write(
        path,
        LOADERS_PY.replace("\n\n\ndef load_customers", "\n\n\n" + columns + "def load_customers"),
    )
    sim.commit("Loaders and their columns")
    sim.advance(HOUR)
    s = sim.session("empty-guards", "Check the schema and fail loudly when a table is empty.")
    s.view(path)
    for table in ("orders", "customers"):
        s.replace(
            path,
            f'    rows = db.fetch("{table}")\n',
            f'    db.check_schema("{table}")\n    rows = db.fetch("{table}")\n',
        )
    for table in ("orders", "customers"):
        s.replace(
            path,
            f'    rows = db.fetch("{table}")\n',
            f'    rows = db.fetch("{table}")\n' + EMPTY_GUARD,
        )
    s.run("python -m pytest -q", 0, "4 passed in 0.05s")
    sim.advance(10 * MINUTE)
    sim.commit("Schema checks; empty tables fail")
    sim.expect(path)


STORE_PY = """\
from orders.io import parse, read, write


def load(path):
    data = read(path)
    if data is None:
        return None
    return parse(data)


def save(path, data):
    write(path, data)
    return True


def remove(path, data):
    write(path, b"")
    return True
"""

# the session's two edits: a guard the file already holds (in load), a line the person
# rewords afterwards, and the line of its own each edit adds: the reworded line breaks
# the run between the guard and the edit's own line
GUARD_SAVE = (
    "def save(path, data):\n    write(path, data)\n",
    "def save(path, data):\n    if data is None:\n        return None\n"
    '    print("saving", path)\n    log_saved(path, len(data))\n    write(path, data)\n',
)
GUARD_REMOVE = (
    'def remove(path, data):\n    write(path, b"")\n',
    "def remove(path, data):\n    if data is None:\n        return None\n"
    '    print("removing", path)\n    log_removed(path)\n    write(path, b"")\n',
)


def _store_guards(sim: Sim, path: str) -> None:
    """The person's store, then the session's two guards, each print reworded."""
    sim.person_write(path, STORE_PY)
    sim.commit("Store: load, save, remove")
    sim.advance(HOUR)
    s = sim.session("store-guards", "save and remove must refuse missing data, and log it.")
    s.view(path)
    s.replace(path, *GUARD_SAVE)
    s.replace(path, *GUARD_REMOVE)
    s.run("python -m pytest -q tests/test_store.py", 0, "4 passed in 0.02s")
    sim.advance(10 * MINUTE)
    for what in ("saving", "removing"):
        sim.person_edit(path, f'print("{what}", path)', f'logger.debug("{what} %s", path)')


def _commit_only(sim: Sim, path: str, text: str, message: str) -> None:
    """Commit ``path`` as ``text`` (``git add -p``: some hunks of the working file),
    leaving the working file as it was."""
    import difflib

    full = [x.copy() for x in sim.files[path]]
    staged = text.splitlines()
    blocks = difflib.SequenceMatcher(
        None, [x.text for x in full], staged, autojunk=False
    ).get_matching_blocks()
    sim.files[path] = [full[a + k] for a, _, size in blocks for k in range(size)]
    if [x.text for x in sim.files[path]] != staged:
        raise AssertionError("the staged text must be lines of the working file, in order")
    (sim.repo / path).write_text(text, encoding="utf-8")
    sim.commit(message)
    sim.files[path] = full
    (sim.repo / path).write_text(sim.read(path), encoding="utf-8")


@scenario("a session's two guards, one text, committed apart: the second commit's guard")
def split_commits_one_text(sim: Sim, small: bool) -> None:
    path = "orders/store.py"
    _store_guards(sim, path)
    # git add -p: save's hunks first, remove's five minutes later; the first commit
    # brought as many copies of the guard as the second edit wrote
    now = sim.read(path)
    remove = now[now.index("def remove(") :]
    first = now.replace(remove, STORE_PY[STORE_PY.index("def remove(") :])
    _commit_only(sim, path, first, "save refuses missing data")
    sim.advance(5 * MINUTE)
    sim.commit("remove refuses missing data")
    sim.expect(path)


@scenario("a session's work rebased onto a person's commit: its guards older than every parent")
def rebased_session(sim: Sim, small: bool) -> None:
    path = "orders/store.py"
    _store_guards(sim, path)
    sim.advance(20 * MINUTE)
    # meanwhile the person's own guard, in a new function, lands on main first
    person = "def size(path):\n    data = read(path)\n    if data is None:\n        return None\n"
    person += "    return len(data)\n\n\n"
    sim.person_edit(path, "def save(path, data):", person + "def save(path, data):")
    main = STORE_PY.replace("def save(path, data):", person + "def save(path, data):")
    _commit_only(sim, path, main, "Store: size")
    sim.advance(2 * HOUR)
    # the session's branch rebased onto it: its two commits made again, a second apart
    now = sim.read(path)
    remove = now[now.index("def remove(") :]
    _commit_only(sim, path, now.replace(remove, STORE_PY[STORE_PY.index("def remove(") :]), "save")
    sim.commit("remove refuses missing data")
    sim.expect(path)


GUARD_REMOVE_ONLY = (
    'def remove(path, data):\n    write(path, b"")\n',
    'def remove(path, data):\n    if data is None:\n        return None\n    write(path, b"")\n',
)


@scenario("a session's work rebased in one second: its guard with no line of its own")
def rebased_one_second(sim: Sim, small: bool) -> None:
    path = "orders/store.py"
    sim.person_write(path, STORE_PY)
    sim.commit("Store: load, save, remove")
    sim.advance(HOUR)
    s = sim.session("store-guards", "save and remove must refuse missing data.")
    s.view(path)
    s.replace(path, *GUARD_SAVE)
    s.replace(path, *GUARD_REMOVE_ONLY)
    sim.advance(20 * MINUTE)
    # the person's own guard, in a new file, lands on main first
    person = "def size(path):\n    data = read(path)\n    if data is None:\n        return None\n"
    sim.person_write("orders/size.py", "from orders.io import read\n\n\n" + person)
    _commit_only(sim, path, STORE_PY, "Size")
    sim.advance(2 * HOUR)
    # the session's branch rebased onto it: its two commits made again in one second,
    # the second's guard (remove's) no line of its own the file holds once
    now = sim.read(path)
    remove = now[now.index("def remove(") :]
    _commit_only(sim, path, now.replace(remove, STORE_PY[STORE_PY.index("def remove(") :]), "save")
    sim.advance(-1)  # each commit moves the clock a second on: this one shares its second
    sim.commit("remove refuses missing data")
    sim.expect(path)
