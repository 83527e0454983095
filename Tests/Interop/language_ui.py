#!/usr/bin/env python3
"""The web app in the person's language, in real headless Chromium (issue 52): a browser that asks for
Arabic gets the page right to left (`lang="ar"`, `dir="rtl"`), in Arabic, mirrored (the title at the
right, the language menu at the left; the arrow keys move along the tabs the way they are read), and
axe-core finds no serious or critical violation in any section at a phone's and a laptop's width, with
nothing wider than the screen. The language menu then chooses German: the page comes back in German,
left to right, and stays German on the next visit (a cookie); "Automatic" returns to the browser's
language. Last, the page in the pseudo-locale (`qps`: every catalog message bracketed and accented)
has no word outside the catalogs: every text and every aria-label, placeholder, alt and title of
every section is bracketed, but the person's own name and technical names (a format's). Prints a JSON
report; exits 1 on failure.

    language_ui.py --url URL
"""
import argparse
import json
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from chromium import audit, browser, watch_errors

ap = argparse.ArgumentParser()
ap.add_argument("--url", required=True)
args = ap.parse_args()
report = {}


def fail(why):
    report["error"] = why
    print(json.dumps(report, ensure_ascii=False))
    sys.exit(1)


def ready(d):
    WebDriverWait(d, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    watch_errors(d)


def page(d):
    root = d.find_element(By.TAG_NAME, "html")
    return {"lang": root.get_attribute("lang"), "dir": root.get_attribute("dir"),
            "nearby": d.find_element(By.ID, "tab-nearby").text, "save": d.find_element(By.CSS_SELECTOR, "#card-form button[type=submit]").get_attribute("textContent")}


d = browser(lang="ar")
try:
    d.get(args.url)
    ready(d)
    report["arabic"] = page(d)
    if report["arabic"] != {"lang": "ar", "dir": "rtl", "nearby": "بالقرب", "save": "احفظ البطاقة"}:
        fail(f"a browser asking for Arabic did not get the Arabic page: {report['arabic']}")
    # Mirrored: the title starts at the right, the language menu sits at the left.
    title = d.find_element(By.CSS_SELECTOR, "header h1").rect
    menu = d.find_element(By.ID, "lang").rect
    report["mirrored"] = title["x"] > menu["x"]
    if not report["mirrored"]:
        fail(f"the header is not mirrored: title at x={title['x']}, menu at x={menu['x']}")
    # The arrow pointing the way Arabic is read (left) moves to the next tab.
    d.find_element(By.ID, "tab-nearby").click()
    d.find_element(By.ID, "tab-nearby").send_keys(Keys.ARROW_LEFT)
    report["arrowLeft"] = d.switch_to.active_element.get_attribute("id")
    if report["arrowLeft"] != "tab-requests":
        fail(f"ArrowLeft in a right-to-left page went to {report['arrowLeft']}, not the next tab")
    d.find_element(By.ID, "tab-nearby").click()
    # axe-core on every section, at a phone's and a laptop's width; nothing needs a sideways scroll.
    found, wide = {}, []
    for width in (360, 1280):
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600})
        found.update({f"{k} ({width} px)": v for k, v in audit({"ar": d}, wide).items()})
    d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    report["axe"], report["narrow"] = found, wide
    if any(found.values()):
        fail(f"axe-core found serious or critical violations on the Arabic page: {found}")
    if wide:
        fail(f"sections wider than a 360-pixel screen: {wide}")
    errors = d.execute_script("return window.__nearcardErrors || []")
    if errors:
        fail(f"the page's script reported errors: {errors}")

    # The menu: German, kept for the next visit; then Automatic, the browser's language again.
    Select(d.find_element(By.ID, "lang")).select_by_value("de")
    WebDriverWait(d, 30).until(lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de")
    ready(d)
    report["german"] = page(d)
    d.get(args.url.split("?")[0])
    ready(d)
    report["germanAgain"] = page(d)
    if report["german"] != {"lang": "de", "dir": "ltr", "nearby": "In der Nähe", "save": "Karte speichern"} or report["germanAgain"] != report["german"]:
        fail(f"choosing German on the page: {report['german']}, on the next visit: {report['germanAgain']}")
    Select(d.find_element(By.ID, "lang")).select_by_value("auto")
    WebDriverWait(d, 30).until(lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "ar")
    ready(d)
    report["automatic"] = page(d)["lang"]

    # The pseudo-locale: nothing on the page escapes the catalogs.
    d.add_cookie({"name": "nearcard-lang", "value": "qps", "path": "/"})
    d.refresh()
    ready(d)
    left = []
    for tab in ("nearby", "requests", "contacts", "messages", "card", "scan"):
        d.find_element(By.CSS_SELECTOR, f'nav button[data-tab="{tab}"]').click()
        left += d.execute_script("""
            const out = [], skip = '#me, #lang, code, script, style';
            const untranslated = (s) => /[A-Za-z]/.test(s) && !s.includes('⟦') && !/^[a-z0-9.:-]+$/.test(s.trim());
            const walk = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
            for (let n = walk.nextNode(); n; n = walk.nextNode()) {
              if (n.parentElement.closest(skip)) continue;
              if (untranslated(n.textContent)) out.push(n.textContent.trim());
            }
            for (const e of document.querySelectorAll('[aria-label], [placeholder], [alt], [title]')) {
              if (e.closest(skip)) continue;
              for (const a of ['aria-label', 'placeholder', 'alt', 'title']) {
                const v = e.getAttribute(a);
                if (v && untranslated(v) && !v.startsWith('http')) out.push(a + '=' + v);
              }
            }
            return out;""")
    report["pseudoUntranslated"] = sorted(set(left))
    if left:
        fail(f"words on the page outside the catalogs (pseudo-locale): {sorted(set(left))}")
    report["ok"] = True
    print(json.dumps(report, ensure_ascii=False))
finally:
    d.quit()
