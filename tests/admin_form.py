"""An admin change form's fields as a browser would submit them, for tests that edit a page and post
it back (inputs, checkboxes, radio buttons, textareas, selects; submit buttons and file inputs left out)."""
from __future__ import annotations

from html.parser import HTMLParser


class FormFields(HTMLParser):
    def __init__(self):
        super().__init__()
        self.data, self._textarea, self._select = {}, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get("name")
        if "disabled" in a:
            return  # a browser does not submit a disabled field
        if tag == "input" and name and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") == "checkbox":
                if "checked" in a:
                    self.data[name] = "on"
            elif a.get("type") == "radio":  # only the chosen one is submitted
                if "checked" in a:
                    self.data[name] = a.get("value", "")
            else:
                self.data[name] = a.get("value", "")
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""
        elif tag == "select" and name:
            self._select = name
            self.data.setdefault(name, "")
        elif tag == "option" and self._select and "selected" in a:
            self.data[self._select] = a.get("value", "")

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea] += data


def change_form(client, url: str) -> tuple[str, str, dict]:
    """(url, the page's HTML, its fields) of an admin change page, "save as new" left out."""
    parser = FormFields()
    page = client.get(url).content.decode()
    parser.feed(page)
    parser.data.pop("_saveasnew", None)
    return url, page, parser.data
