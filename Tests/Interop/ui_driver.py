#!/usr/bin/env python3
"""Drives two people's `nearcard ui` pages in real headless Chromium (Debian's chromium and
chromium-driver, through Selenium): Ada sees Grace in Nearby and asks to exchange, both pages show the
same check code, Ada confirms the codes match and Grace accepts with a message; both pages end on the
other's contact, verified, with both messages. Then Grace declines a second request and Ada's page says
so. Card text is checked to be shown as text, never as HTML. Prints a JSON report; exits 1 on failure.

    ui_driver.py --ada URL --grace URL --ada-name NAME --grace-name NAME [--grace-driver URL] [--shots DIR]

--grace-driver: drive Grace's browser through a chromedriver at URL (Grace's laptop: another network
namespace, reached over the test's veth), instead of one started here.
"""
import argparse
import json
import os
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from chromium import audit, browser, watch_errors  # this folder's module: Debian's headless Chromium, axe-core on each section

ap = argparse.ArgumentParser()
ap.add_argument("--ada", required=True)
ap.add_argument("--grace", required=True)
ap.add_argument("--ada-name", required=True)
ap.add_argument("--grace-name", required=True)
ap.add_argument("--shots", default=None)
ap.add_argument("--grace-driver", default=None)
ap.add_argument("--scan-photo", default=None)
args = ap.parse_args()
report = {}


def fail(why):
    report["error"] = why
    print(json.dumps(report))
    sys.exit(1)


def wait(d, cond, what, seconds=60):
    try:
        return WebDriverWait(d, seconds).until(cond)
    except Exception:
        fail(f"{what} did not happen within {seconds} s; page says: {d.find_element(By.ID, 'notice').text!r}")


def by_keyboard(d, target, keys=None, limit=60):
    """Reaches `target` with the Tab key alone (from the top of the page) and presses Enter on it, or
    types `keys` into it: what a person without a mouse does."""
    from selenium.webdriver.common.action_chains import ActionChains
    d.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    for _ in range(limit):
        if d.execute_script("return document.activeElement === arguments[0]", target):
            ActionChains(d).send_keys(keys if keys is not None else Keys.ENTER).perform()
            return
        ActionChains(d).send_keys(Keys.TAB).perform()
    fail(f"{target.get_attribute('outerHTML')[:80]} cannot be reached with the Tab key")


def shot(d, name):
    if args.shots:
        d.save_screenshot(f"{args.shots}/ui-{name}.png")


ada, grace = browser(), browser(args.grace_driver)
try:
    for d, url in ((ada, args.ada), (grace, args.grace)):
        d.get(url)
        wait(d, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true", "the page loading")
        watch_errors(d)
        if "token=" in d.current_url:
            fail("the token stayed in the address bar")
    # Every control has an accessible name; the keyboard alone reaches and opens a section.
    unnamed = grace.execute_script("""
        const out = [];
        for (const e of document.querySelectorAll('button, input, select, textarea, a')) {
          const name = (e.getAttribute('aria-label') || e.textContent || '').trim() || (e.labels && e.labels.length ? 'label' : '');
          if (!name && e.type !== 'hidden') out.push(e.outerHTML.slice(0, 80));
        }
        return out;""")
    if unnamed:
        fail(f"controls without an accessible name: {unnamed}")
    # The first Tab reaches the skip link, which leads to the content.
    from selenium.webdriver.common.action_chains import ActionChains
    grace.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    ActionChains(grace).send_keys(Keys.TAB).perform()
    if grace.switch_to.active_element.get_attribute("class") != "skip":
        fail(f"the first Tab stop is {grace.switch_to.active_element.get_attribute('outerHTML')[:80]}, not the skip link")
    ActionChains(grace).send_keys(Keys.ENTER).perform()
    wait(grace, lambda d: d.switch_to.active_element.get_attribute("id") == "main", "the skip link leading to the content")
    # The sections are a tab list: Tab reaches the selected tab, the arrows move to another and open it.
    grace.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    for _ in range(12):
        if grace.switch_to.active_element.get_attribute("role") == "tab":
            break
        ActionChains(grace).send_keys(Keys.TAB).perform()
    if grace.switch_to.active_element.get_attribute("data-tab") != "nearby":
        fail("the tab list cannot be reached with the Tab key")
    ActionChains(grace).send_keys(Keys.ARROW_RIGHT).perform()
    ActionChains(grace).send_keys(Keys.ARROW_RIGHT).perform()
    if grace.switch_to.active_element.get_attribute("data-tab") != "contacts" or grace.switch_to.active_element.get_attribute("aria-selected") != "true":
        fail("the arrow keys do not move to the Contacts tab")
    wait(grace, lambda d: d.find_element(By.ID, "contacts").is_displayed(), "Contacts opened from the keyboard")
    # Empty states say what to do: no contacts yet, no request (with a way to Nearby).
    wait(grace, lambda d: d.find_element(By.ID, "no-contacts").is_displayed(), "the empty contact list's words")
    report["emptyContacts"] = grace.find_element(By.ID, "no-contacts").text
    ActionChains(grace).send_keys(Keys.ARROW_LEFT).perform()
    wait(grace, lambda d: d.find_element(By.ID, "requests").is_displayed(), "Requests opened from the keyboard")
    report["emptyRequests"] = grace.find_element(By.ID, "no-requests").text
    grace.find_element(By.ID, "go-nearby").click()
    wait(grace, lambda d: d.find_element(By.ID, "nearby").is_displayed(), "the empty Requests' button to Nearby")
    report["keyboard"] = True
    # Ada edits her card on the page: adds an email and shares it; the preview shows what Grace will get.
    ada.find_element(By.CSS_SELECTOR, 'nav button[data-tab="card"]').click()
    wait(ada, lambda d: d.find_element(By.ID, "f-name").get_attribute("value") == args.ada_name, "Ada's card in the form")
    ada.find_element(By.ID, "f-email").send_keys("ada@example.org")
    ada.find_element(By.CSS_SELECTOR, '[data-share="email"]').click()
    wait(ada, lambda d: "ada@example.org" in d.find_element(By.ID, "preview").text, "the email in the preview")
    # Pronouns and a photo (a wide camera picture with EXIF and a GPS position): the page shows the
    # square the node made, and both are shared.
    ada.find_element(By.ID, "f-pronouns").send_keys("she/her")
    ada.find_element(By.CSS_SELECTOR, '[data-share="pronouns"]').click()
    ada.find_element(By.CSS_SELECTOR, '[data-share="photo"]').click()
    ada.find_element(By.CSS_SELECTOR, '#card-form button[type="submit"]').click()
    wait(ada, lambda d: "Saved" in d.find_element(By.ID, "notice").text, "the card saved")
    from PIL import Image
    import tempfile
    picture = os.path.join(tempfile.mkdtemp(prefix="nearcard-ui-"), "camera.jpg")
    img = Image.new("RGB", (640, 400), (200, 120, 40))
    exif = Image.Exif()
    exif[0x010F] = "CameraMaker"
    exif[0x8825] = {1: "N", 2: (51.0, 30.0, 0.0), 3: "W", 4: (0.0, 7.0, 0.0)}
    img.save(picture, exif=exif.tobytes())
    os.chmod(os.path.dirname(picture), 0o755)
    os.chmod(picture, 0o644)
    ada.find_element(By.ID, "f-photo").send_keys(picture)
    wait(ada, lambda d: "Photo saved" in d.find_element(By.ID, "notice").text, "the photo saved")
    wait(ada, lambda d: d.execute_script("const i = document.getElementById('f-photo-preview'); return !i.hidden && i.complete && i.naturalWidth"), "the photo shown")
    report["photoPreview"] = ada.execute_script("const i = document.getElementById('f-photo-preview'); return [i.naturalWidth, i.naturalHeight]")
    if report["photoPreview"] != [256, 256]:
        fail(f"the photo on My card is not the 256-pixel square: {report['photoPreview']}")
    wait(ada, lambda d: d.execute_script("const i = document.getElementById('qr'); return i.complete && i.naturalWidth > 0"), "the QR code shown")
    report["preview"] = ada.find_element(By.ID, "preview").text
    # Each "share" box beside its one-line field, level with it: the largest gap between their middles, in pixels.
    report["shareMisalignment"] = ada.execute_script("""
        let worst = 0;
        for (const f of document.querySelectorAll('#card-form .field')) {
          const input = f.querySelector('input:not([type=checkbox]):not([type=file])'), share = f.querySelector('.share');
          if (!input || !share) continue;
          const a = input.getBoundingClientRect(), b = share.getBoundingClientRect();
          if (b.left < a.right) return 999;  // not beside it
          worst = Math.max(worst, Math.abs((a.top + a.bottom) / 2 - (b.top + b.bottom) / 2));
        }
        return worst;""")
    shot(ada, "card")
    # "Show my code": the code alone, nearly the whole window, by keyboard; Escape returns to the button.
    by_keyboard(ada, ada.find_element(By.ID, "qr-full"))
    wait(ada, lambda d: d.find_element(By.ID, "qr-view").is_displayed(), "the full-window code")
    wait(ada, lambda d: d.execute_script("const i = document.getElementById('qr-big'); return i.complete && i.naturalWidth > 0"), "the big code loaded")
    big = ada.execute_script("const r = document.getElementById('qr-big').getBoundingClientRect(); "
                             "return r.width / Math.min(innerWidth, innerHeight)")
    shot(ada, "code")
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(ada).send_keys(Keys.ESCAPE).perform()
    wait(ada, lambda d: not d.find_element(By.ID, "qr-view").is_displayed(), "the full-window code closed")
    report["fullCode"] = {"share": round(big, 2), "focusBack": ada.switch_to.active_element.get_attribute("id") == "qr-full"}
    if big < 0.7 or not report["fullCode"]["focusBack"]:
        fail(f"the full-window code: {report['fullCode']}")
    ada.find_element(By.CSS_SELECTOR, 'nav button[data-tab="nearby"]').click()
    # Ada sees Grace nearby and asks, with a message.
    peer = wait(ada, EC.presence_of_element_located((By.CSS_SELECTOR, f'#peers li[data-instance="{args.grace_name}"] button')), "Grace in Nearby")
    shot(ada, "nearby")
    # The whole exchange by keyboard alone, on both pages: Tab to each control, type, Enter.
    by_keyboard(ada, ada.find_element(By.ID, "message"), "Hi Grace, from the page")
    by_keyboard(ada, peer)
    # The message went with this exchange: the box is empty for the next one (it would go to anyone).
    wait(ada, lambda d: d.find_element(By.ID, "message").get_attribute("value") == "", "the message box emptied")
    codes = {}
    for name, d in (("ada", ada), ("grace", grace)):
        wait(d, EC.visibility_of_element_located((By.CSS_SELECTOR, "#request-list li.request .code")), f"the check code on {name}'s page")
        codes[name] = d.find_element(By.CSS_SELECTOR, "#request-list li.request .code").text
    report["codes"] = codes
    if codes["ada"] != codes["grace"]:
        fail(f"the two pages show different codes: {codes}")
    shot(grace, "request")
    # Grace accepts with a message; Ada confirms the codes match.
    g = grace.find_element(By.CSS_SELECTOR, "#request-list li.request")
    # The request's message box has a visible label, tied to it.
    label = g.find_element(By.TAG_NAME, "label")
    if "Message for" not in label.text or not g.find_elements(By.ID, label.get_attribute("for")):
        fail(f"the request's message box has no visible label: {label.text!r}")
    by_keyboard(grace, g.find_element(By.TAG_NAME, "input"), "Hello Ada, from the other page")
    by_keyboard(grace, g.find_elements(By.TAG_NAME, "button")[0])
    # (Protocol v2: Grace shows who she is when she accepts; then Ada's page asks her to confirm.)
    wait(ada, lambda d: d.find_elements(By.CSS_SELECTOR, "#request-list li.request:not(.waiting) button"), "Ada asked to confirm once Grace accepted")
    by_keyboard(ada, ada.find_element(By.CSS_SELECTOR, "#request-list li.request:not(.waiting)").find_elements(By.TAG_NAME, "button")[0])
    report["keyboardExchange"] = True
    for name, d, other in (("ada", ada, args.grace_name), ("grace", grace, args.ada_name)):
        wait(d, EC.visibility_of_element_located((By.CSS_SELECTOR, "#contact h3")), f"the new contact on {name}'s page")
        article = d.find_element(By.ID, "contact")
        if name == "grace":
            # Ada's photo came with her card: the square, beside her name.
            wait(d, lambda d: d.execute_script("const i = document.querySelector('#contact img.photo'); return i && i.complete && i.naturalWidth"), "Ada's photo on Grace's page")
            report["photoOnGracesPage"] = d.execute_script("const i = document.querySelector('#contact img.photo'); return [i.naturalWidth, i.naturalHeight]")
        # What shows before "Details" is opened: words, no DID or fingerprint.
        report[name] = {"contact": article.find_element(By.TAG_NAME, "h3").text, "text": article.text,
                        "details": article.find_element(By.TAG_NAME, "details").get_attribute("textContent"),
                        "htmlElementsInName": len(article.find_elements(By.CSS_SELECTOR, "h3 *")),
                        # Every piece of the peer's text is isolated (dir="auto", PROTOCOL.md §1).
                        "isolated": all(e.get_attribute("dir") == "auto" for e in article.find_elements(By.CSS_SELECTOR, "h3, dd"))}
        if report[name]["contact"] != other:
            fail(f"{name}'s page shows {report[name]['contact']!r}, not {other!r}")
        # Both pages say how it ended — the accepting one too, not "Accepted: exchanging…" for ever.
        wait(d, lambda d: "Exchanged cards with " + other in d.find_element(By.ID, "notice").text, f"the outcome on {name}'s page")
        report.setdefault("outcome", {})[name] = d.find_element(By.ID, "notice").text
    shot(ada, "contact")
    # A follow-up message from Ada's page reaches Grace's page.
    ada.find_element(By.CSS_SELECTOR, 'nav button[data-tab="messages"]').click()
    wait(ada, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#to option")) == 1, "Grace in the To list")
    ada.find_element(By.ID, "text").send_keys("Lunch tomorrow? (from the page)")
    ada.find_element(By.CSS_SELECTOR, '#write button[type="submit"]').click()
    wait(ada, lambda d: "Delivered" in d.find_element(By.ID, "notice").text, "the message delivered")
    wait(grace, lambda d: "Lunch tomorrow? (from the page)" in d.find_element(By.ID, "notice").text, "the message on Grace's page")
    grace.find_element(By.CSS_SELECTOR, 'nav button[data-tab="messages"]').click()
    wait(grace, lambda d: "Lunch tomorrow?" in d.find_element(By.ID, "inbox").text, "the message in Grace's inbox")
    report["graceInbox"] = grace.find_element(By.ID, "inbox").text
    shot(grace, "messages")
    # A second request, declined: both pages say so.
    ada.find_element(By.CSS_SELECTOR, 'nav button[data-tab="nearby"]').click()
    wait(ada, EC.element_to_be_clickable((By.CSS_SELECTOR, f'#peers li[data-instance="{args.grace_name}"] button')), "Grace in Nearby again").click()
    wait(grace, EC.visibility_of_element_located((By.CSS_SELECTOR, "#request-list li.request")), "the second request on Grace's page")
    grace.find_element(By.CSS_SELECTOR, "#request-list li.request").find_elements(By.TAG_NAME, "button")[1].click()
    wait(ada, lambda d: "declined" in d.find_element(By.ID, "notice").text, "the decline on Ada's page")
    report["adaNotice"] = ada.find_element(By.ID, "notice").text
    # A third request, where Ada's screen shows another code than Grace's: "They differ" tells Grace why.
    ada.find_element(By.CSS_SELECTOR, 'nav button[data-tab="nearby"]').click()
    wait(ada, EC.element_to_be_clickable((By.CSS_SELECTOR, f'#peers li[data-instance="{args.grace_name}"] button')), "Grace in Nearby a third time").click()
    wait(grace, EC.visibility_of_element_located((By.CSS_SELECTOR, "#request-list li.request")), "the third request on Grace's page")
    grace.find_element(By.CSS_SELECTOR, "#request-list li.request").find_elements(By.TAG_NAME, "button")[0].click()
    wait(ada, lambda d: d.find_elements(By.CSS_SELECTOR, "#request-list li.request:not(.waiting) button"), "Ada asked to confirm the third time")
    differ = ada.find_element(By.CSS_SELECTOR, "#request-list li.request:not(.waiting)").find_elements(By.TAG_NAME, "button")[1]
    if differ.text != "They differ":
        fail(f"Ada's second button reads {differ.text!r}")
    differ.click()
    wait(grace, lambda d: "declined" in d.find_element(By.ID, "notice").text, "the decline, on Grace's page")
    report["graceNotice"] = grace.find_element(By.ID, "notice").text
    # The other way: Grace asks from her page, Ada accepts on hers, Grace confirms; both say how it ended.
    grace.find_element(By.CSS_SELECTOR, 'nav button[data-tab="nearby"]').click()
    wait(grace, EC.element_to_be_clickable((By.CSS_SELECTOR, f'#peers li[data-instance="{args.ada_name}"] button')), "Ada in Grace's Nearby").click()
    wait(ada, EC.visibility_of_element_located((By.CSS_SELECTOR, "#request-list li.request:not(.waiting) button")), "Grace's request on Ada's page")
    ada.find_element(By.CSS_SELECTOR, "#request-list li.request:not(.waiting)").find_elements(By.TAG_NAME, "button")[0].click()
    wait(grace, lambda d: d.find_elements(By.CSS_SELECTOR, "#request-list li.request:not(.waiting) button"), "Grace asked to confirm once Ada accepted")
    grace.find_element(By.CSS_SELECTOR, "#request-list li.request:not(.waiting)").find_elements(By.TAG_NAME, "button")[0].click()
    for name, d, other in (("ada", ada, args.grace_name), ("grace", grace, args.ada_name)):
        wait(d, lambda d: "Exchanged cards with " + other in d.find_element(By.ID, "notice").text, f"the second exchange's outcome on {name}'s page")
    report["reverse"] = True
    # A phone photo of a code (JPEG) dropped on Ada's Scan page is read and kept.
    if args.scan_photo:
        ada.find_element(By.CSS_SELECTOR, 'nav button[data-tab="scan"]').click()
        ada.find_element(By.ID, "scan-file").send_keys(args.scan_photo)
        ada.find_element(By.ID, "scan-go").click()
        wait(ada, lambda d: d.find_element(By.ID, "scan-results").text != "", "the scan's result")
        report["scan"] = ada.find_element(By.ID, "scan-results").text
        shot(ada, "scan")
    # axe-core (bundled with axe-selenium-python) on every section of both pages, and of Ada's at a
    # phone's, a tablet's and a laptop's width (360, 768, 1280 CSS pixels), light and dark: no serious
    # or critical violation, and no section needing a sideways scroll.
    report["axe"] = audit({"ada": ada, "grace": grace})
    wide = []
    for width in (360, 768, 1280):
        ada.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600})
        for scheme in ("light", "dark"):
            ada.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            report["axe"].update({f"{k} ({width} px, {scheme})": v for k, v in audit({"ada": ada}, wide).items()})
    ada.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    ada.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    ada.find_element(By.CSS_SELECTOR, 'nav button[data-tab="nearby"]').click()
    report["narrow"] = wide
    if wide:
        fail(f"sections wider than a 360-pixel screen: {wide}")
    if any(report["axe"].values()):
        fail(f"axe-core found serious or critical violations: {report['axe']}")
    # No page threw: an uncaught error or rejected promise in either page's script, from its start (which
    # marks the page ready only when it finished) to here, is a failure.
    script_errors = [f"{name}: {e}" for name, d in (("ada", ada), ("grace", grace))
                     for e in d.execute_script("return window.__nearcardErrors || ['the error watch is gone (the page reloaded)']")]
    report["scriptErrors"] = script_errors
    if script_errors:
        fail(f"the page's script reported errors: {script_errors}")
    report["ok"] = True
    print(json.dumps(report))
finally:
    ada.quit()
    grace.quit()
