#!/usr/bin/env python3
"""Drives the Contacts page's "Address book" in real headless Chromium (Debian's chromium and
chromium-driver, through Selenium), as a person would: opens Contacts, fills in the server's address,
the user and the password, adds it, waits for the account to show in sync, presses "Sync now", and
checks the password is nowhere on the page or in the API's answer. Runs axe-core on the section.
Prints a JSON report; exits 1 on failure.

    addressbook_ui.py --page URL --server URL --user NAME --password-file FILE
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
ap.add_argument("--server", required=True)
ap.add_argument("--user", required=True)
ap.add_argument("--password-file", required=True)
args = ap.parse_args()
report = {}
password = open(args.password_file).read().strip()


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
    d.find_element(By.ID, "ab-url").send_keys(args.server)
    d.find_element(By.ID, "ab-user").send_keys(args.user)
    d.find_element(By.ID, "ab-password").send_keys(password)
    d.find_element(By.CSS_SELECTOR, "#ab-form button[type=submit]").click()
    try:
        WebDriverWait(d, 30).until(lambda d: d.find_element(By.ID, "notice").text.startswith("Added "))
    except Exception:
        fail("the address book was not added", d)
    report["added"] = d.find_element(By.ID, "notice").text
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
finally:
    d.quit()
print(json.dumps(report))
