"""Debian's headless Chromium through Selenium and Debian's chromedriver, as the page tests drive it
(ui_driver.py, addressbook_ui.py): no browser is downloaded."""
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,900",
         "--no-first-run", "--disable-extensions", "--disable-background-networking", "--disable-sync",
         "--disable-component-update", "--disable-default-apps", "--no-default-browser-check")


def browser(remote=None, lang=None):
    """A headless Chromium; `remote`: a chromedriver's URL (another laptop's, in another namespace);
    `lang`: the languages it asks pages for (Accept-Language), e.g. "ar" or "de-DE,de"."""
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in FLAGS:
        o.add_argument(a)
    if lang:
        o.add_argument(f"--lang={lang.split(',')[0]}")
        o.add_experimental_option("prefs", {"intl.accept_languages": lang})
    if remote:
        return webdriver.Remote(command_executor=remote, options=o)
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=o)


def audit(pages, wide=None):
    """Runs axe-core on each section of each page; returns {page/section: [violation id: impact …]}.
    `wide`: a list the sections that need a sideways scroll are added to."""
    from axe_selenium_python import Axe
    found = {}
    for name, d in pages.items():
        for tab in ("nearby", "requests", "contacts", "messages", "card", "scan"):
            d.find_element(By.CSS_SELECTOR, f'nav button[data-tab="{tab}"]').click()
            time.sleep(0.2)
            if wide is not None and d.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1"):
                wide.append(f"{name}/{tab}")
            axe = Axe(d)
            axe.inject()
            result = axe.run()
            found[f"{name}/{tab}"] = [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target'] if v['nodes'] else ''} "
                                      f"{(v['nodes'][0].get('any') or [{}])[0].get('message', '') if v['nodes'] else ''}"
                                      for v in result["violations"] if v.get("impact") in ("serious", "critical")]
        d.find_element(By.CSS_SELECTOR, 'nav button[data-tab="nearby"]').click()
    return found


def watch_errors(d):
    """From now on, the page's uncaught errors and rejected promises collect in window.__nearcardErrors."""
    d.execute_script("""
        window.__nearcardErrors = [];
        addEventListener('error', e => window.__nearcardErrors.push(String(e.message)));
        addEventListener('unhandledrejection', e => window.__nearcardErrors.push(String(e.reason)));""")
