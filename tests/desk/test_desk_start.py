"""A lighter desk start: the runtime starts from the desk's stdlib subset with no
probe request, restores the engine's memory snapshot when there is one for the
checked bundle (a cold start otherwise, with the same packets), nothing fails
on the way, and the start-up shows its stages."""

import json

import pytest

import engine
from tests.desk import helpers as d

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def test_the_desk_starts_without_a_failed_or_wasted_request(context, site):
    requests, failed = [], []
    context.on("request", lambda r: requests.append((r.method, r.url[len(site.url) :])))
    context.on("requestfailed", lambda r: failed.append(f"{r.method} {r.url} {r.failure}"))
    page = context.new_page()
    d.open_desk(page, site)
    assert failed == []
    assert [m for m, _ in requests if m != "GET"] == []  # no HEAD probe
    paths = [p for _, p in requests]
    assert "assets/desk/runtime/python_stdlib.zip" in paths
    # neither the runtime's whole stdlib nor its package lock: the desk needs neither
    assert not [p for p in paths if p.startswith("vendor/pyodide/") and p.endswith((".zip", ".json"))]
    for asset in ("python_stdlib.zip", "runtime.json", "engine.snapshot"):
        assert paths.count(f"assets/desk/runtime/{asset}") == 1, asset
    # restored from the snapshot of exactly the bundle this page checked
    assert page.evaluate("window.fbDeskTimings.start") == "snapshot"


def test_start_up_is_shown_in_stages(page, site):
    page.goto(site.url + "desk/")
    stages = page.locator(".fb-stages li")
    stages.first.wait_for(state="attached")
    assert stages.count() == 4
    assert page.locator(".fb-stages progress").get_attribute("aria-label") == "Engine start-up"
    page.wait_for_selector("#fb-desk[data-ready=true]", state="attached", timeout=90_000)
    done = page.eval_on_selector_all(
        ".fb-stages li", "items => items.map(i => [i.dataset.stage, i.dataset.done, i.textContent])"
    )
    assert [s for s, _, _ in done] == ["bundle", "runtime", "import", "session"]
    assert all(flag == "true" and text.endswith(" s)") for _, flag, text in done), done
    assert page.evaluate("document.querySelector('.fb-stages progress').value") == 4
    assert not page.locator(".fb-stages").is_visible()  # gone once the packet is shown
    assert not page.errors


def test_the_desk_page_starts_one_worker_from_its_head(context, site):
    # early.js starts the worker before the theme's script and the desk's
    # modules run; client.js adopts it (and what it said meanwhile) instead of
    # starting a second one.
    requests = []
    context.on("request", lambda r: requests.append(r.url[len(site.url) :]))
    page = context.new_page()
    d.open_desk(page, site)
    assert page.evaluate("window.fbEarlyWorker === undefined")  # adopted
    assert [w.url[len(site.url) :] for w in page.workers if "/desk/" in w.url] == ["assets/desk/worker.js"]
    assert requests.count("assets/desk/worker.js") == 1
    assert requests.index("assets/desk/early.js") < requests.index("assets/desk/client.js")
    done = page.eval_on_selector_all(".fb-stages li", "items => items.map(i => i.dataset.done)")
    assert done == ["true"] * 4  # the progress said before adoption was replayed


def test_when_the_desk_modules_run_before_early_js_there_is_still_one_worker(context, site):
    # early.js and desk.js are both async: on a busy machine either may run first (CI saw two
    # workers and the stdlib fetched twice). Run early.js again after the desk's modules started
    # the worker: it must stand down.
    requests = []
    context.on("request", lambda r: requests.append(r.url[len(site.url) :]))
    page = context.new_page()
    d.open_desk(page, site)
    page.add_script_tag(url=site.url + "assets/desk/early.js")
    page.wait_for_timeout(500)
    assert page.evaluate("window.fbEarlyWorker === undefined")
    assert [w.url[len(site.url) :] for w in page.workers if "/desk/" in w.url] == ["assets/desk/worker.js"]
    assert requests.count("assets/desk/worker.js") == 1
    assert requests.count("assets/desk/runtime/python_stdlib.zip") == 1


# A session with moves: three of W2's gold batches and a day closed without one.
ANSWER = """async (moves) => {
  const client = await import(new URL("../assets/desk/client.js", location.href).href);
  const info = await client.engineInfo();
  const source = JSON.stringify({ episode: "W2" });
  const state = await client.call("state", source, JSON.stringify(moves));
  const tool = await client.call("tool", JSON.stringify(state.packet), "project", JSON.stringify({ actions: [] }));
  const refused = await client.call("tool", "{}", "headroom", "{}");  // an error path too
  delete state.ms; delete tool.ms;
  return { start: info.start, note: info.start_note, state, tool, refusal: refused.error };
}"""


def _answers(context, site, query=""):
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site.url + "desk/" + query)
    page.wait_for_selector("#fb-desk[data-ready=true]", state="attached", timeout=90_000)
    gold = engine.gold_candidate(engine.load_episode("W2"))["batches"]
    out = page.evaluate(ANSWER, [{"batch": b} for b in gold[:3]] + [{"skip": 4}])
    assert not errors
    page.close()
    return out


def test_the_snapshot_and_a_cold_start_give_the_same_packets(context, site):
    from_snapshot = _answers(context, site)
    cold = _answers(context, site, "?start=cold")
    assert (from_snapshot["start"], cold["start"]) == ("snapshot", "cold")
    assert cold["note"] == "cold start asked for (?start=cold)"
    for key in ("state", "tool", "refusal"):
        assert from_snapshot[key] == cold[key], key
    # and both are the host engine's answers, byte for byte
    run = engine.Run(engine.load_episode("W2"))
    for batch in engine.gold_candidate(engine.load_episode("W2"))["batches"][:3]:
        run.submit(batch)
    run.skip()
    assert from_snapshot["state"]["packet"] == json.loads(json.dumps(run.packet()))
    assert from_snapshot["state"]["head"] == run.head


def test_a_snapshot_that_does_not_hash_to_its_key_is_not_restored(context, site):
    """A stale or damaged image (its bytes are not the ones runtime.json names) means a cold start.
    (runtime.json is changed rather than the 30 MB image: the same check, a small route.)"""

    def stale(route):
        key = json.loads(route.fetch().text())
        key["snapshot"]["sha256"] = "0" * 64
        route.fulfill(status=200, body=json.dumps(key), headers={"Content-Type": "application/json"})

    context.route("**/assets/desk/runtime/runtime.json", stale)
    out = _answers(context, site)
    assert out["start"] == "cold"
    assert out["note"].startswith("cold start: runtime/engine.snapshot: sha256 ") and out["note"].endswith(
        f"is not runtime.json's {'0' * 64}"
    )
    assert out["state"]["open_day"] == 5
