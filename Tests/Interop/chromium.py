"""Debian's headless Chromium through Selenium and Debian's chromedriver, as the page tests drive it
(ui_driver.py, addressbook_ui.py): no browser is downloaded."""
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,900",
         "--no-first-run", "--disable-extensions", "--disable-background-networking", "--disable-sync",
         "--disable-component-update", "--disable-default-apps", "--no-default-browser-check")


def browser(remote=None):
    """A headless Chromium; `remote`: a chromedriver's URL (another laptop's, in another namespace)."""
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in FLAGS:
        o.add_argument(a)
    if remote:
        return webdriver.Remote(command_executor=remote, options=o)
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=o)
