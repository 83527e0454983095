#!/usr/bin/env python3
"""Drives the Contacts page's "Address book" in real headless Chromium (Debian's chromium and
chromium-driver, through Selenium), as a person would: opens Contacts, fills in the server's address,
the user and the password, adds it, waits for the account to show in sync, presses "Sync now", and
checks the password is nowhere on the page or in the API's answer. Runs axe-core on the section.
First it tries a wrong password: what the page says, where, and which field it marks. At 360 px wide
it checks the account's row fits. Prints a JSON report; exits 1 on failure.

    addressbook_ui.py --page URL --server URL --user NAME --password-file FILE
    addressbook_ui.py --page URL --sync-and-read TEXT   (presses "Sync now", waits for TEXT in the list;
                                                        reports the list's and the page notice's words)
"""
import argparse
import json
import sys
import urllib.request

from axe_selenium_python import Axe
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from chromium import browser

ap = argparse.ArgumentParser()
ap.add_argument("--page", required=True)
ap.add_argument("--server")
ap.add_argument("--user")
ap.add_argument("--password-file")
ap.add_argument("--sync-and-read", metavar="TEXT")
args = ap.parse_args()
report = {}
password = open(args.password_file).read().strip() if args.password_file else None


def fail(why, d=None):
    report["error"] = why
    if d is not None:
        report["notice"] = d.find_element(By.ID, "notice").text
    print(json.dumps(report))
    sys.exit(1)


d = browser()
try:
    d.get(args.page)
    WebDriverWait(d, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    d.find_element(By.CSS_SELECTOR, "nav button[data-tab=contacts]").click()
    WebDriverWait(d, 10).until(lambda d: d.find_element(By.ID, "ab-form").is_displayed())
    if args.sync_and_read:
        WebDriverWait(d, 15).until(lambda d: d.find_element(By.CSS_SELECTOR, "#ab-list li[data-addressbook]"))
        d.find_element(By.ID, "ab-sync").click()
        try:
            WebDriverWait(d, 30).until(lambda d: d.find_element(By.ID, "notice").text.startswith("Synced."))
        except Exception:
            fail("Sync now did not answer", d)
        try:
            WebDriverWait(d, 10).until(lambda d: args.sync_and_read in d.find_element(By.CSS_SELECTOR, "#ab-list li").text)
        except Exception:
            fail(f"{args.sync_and_read!r} is not in the list: {d.find_element(By.ID, 'ab-list').text!r}", d)
        report["list"] = d.find_element(By.ID, "ab-list").text
        # Opened afresh, the page says a standing conflict at the top.
        d.refresh()
        WebDriverWait(d, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
        d.find_element(By.CSS_SELECTOR, "nav button[data-tab=contacts]").click()
        WebDriverWait(d, 15).until(lambda d: d.find_element(By.CSS_SELECTOR, "#ab-list li[data-addressbook]"))
        report["notice"] = d.find_element(By.ID, "notice").text
        print(json.dumps(report))
        sys.exit(0)
    d.find_element(By.ID, "ab-url").send_keys(args.server)
    d.find_element(By.ID, "ab-user").send_keys(args.user)
    # A wrong password first: said beside the form, in its terms, on the password field.
    d.find_element(By.ID, "ab-password").send_keys("not-" + password)
    d.find_element(By.CSS_SELECTOR, "#ab-form button[type=submit]").click()
    try:
        WebDriverWait(d, 30).until(lambda d: d.find_element(By.ID, "ab-error").text != "")
    except Exception:
        fail("a wrong password said nothing beside the form", d)
    report["wrongPassword"] = d.find_element(By.ID, "ab-error").text
    report["wrongPasswordInForm"] = d.execute_script("return document.getElementById('ab-form').contains(document.getElementById('ab-error'))")
    report["wrongPasswordMarked"] = d.find_element(By.ID, "ab-password").get_attribute("aria-invalid")
    report["focused"] = d.execute_script("return document.activeElement && document.activeElement.id")
    report["noticeAfterWrong"] = d.find_element(By.ID, "notice").text
    d.find_element(By.ID, "ab-password").clear()
    d.find_element(By.ID, "ab-password").send_keys(password)
    d.find_element(By.CSS_SELECTOR, "#ab-form button[type=submit]").click()
    try:
        WebDriverWait(d, 30).until(lambda d: d.find_element(By.ID, "ab-status").text.startswith("Added "))
    except Exception:
        fail("the address book was not added", d)
    report["added"] = d.find_element(By.ID, "ab-status").text
    report["errorCleared"] = d.find_element(By.ID, "ab-error").text == "" and d.find_element(By.ID, "ab-password").get_attribute("aria-invalid") is None
    try:
        row = WebDriverWait(d, 15).until(lambda d: d.find_element(By.CSS_SELECTOR, "#ab-list li[data-addressbook]"))
    except Exception:
        fail("the address book is not listed", d)
    report["listed"] = row.text
    report["passwordField"] = d.find_element(By.ID, "ab-password").get_attribute("value")
    d.find_element(By.ID, "ab-sync").click()
    try:
        WebDriverWait(d, 30).until(lambda d: d.find_element(By.ID, "notice").text.startswith("Synced."))
    except Exception:
        fail("Sync now did not answer", d)
    report["synced"] = d.find_element(By.ID, "notice").text
    # The password is not on the page, nor in what the API answers (read with the page's own cookie).
    report["passwordOnPage"] = password in d.page_source
    cookie = "; ".join(f"{c['name']}={c['value']}" for c in d.get_cookies())
    base = args.page.split("?")[0].rstrip("/")
    req = urllib.request.Request(base + "/api/addressbooks", headers={"Cookie": cookie})
    answer = urllib.request.urlopen(req, timeout=10).read().decode()
    report["api"] = json.loads(answer)
    report["passwordInAPI"] = password in answer
    result = Axe(d)
    result.inject()
    found = result.run(context="#contacts")
    report["axe"] = [v["id"] for v in found["violations"] if v.get("impact") in ("serious", "critical")]
    # A phone's width: the account's row (its URL, user, state and Remove) within the row, nothing cut off.
    d.set_window_size(360, 800)
    report["fitsAt360"] = d.execute_script("""
        const li = document.querySelector('#ab-list li'); const box = li.getBoundingClientRect();
        return li.scrollWidth <= li.clientWidth + 1 && document.documentElement.scrollWidth <= window.innerWidth + 1
            && [...li.children].every(c => { const r = c.getBoundingClientRect(); return r.left >= box.left - 1 && r.right <= box.right + 1; });""")
    found = result.run(context="#contacts")
    report["axe360"] = [v["id"] for v in found["violations"] if v.get("impact") in ("serious", "critical")]
finally:
    d.quit()
print(json.dumps(report))
