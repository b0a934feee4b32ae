"""What a browser test asks of a loaded page: that nothing a record said became
markup or code. `AUDIT` runs in the page and lists every event-handler
attribute, every script that is not one the site ships, every frame, object,
base, refresh, off-site form or javascript:/evil.example URL, and any image,
style or link inside the article; plus the sentinel `window.__pwned`, the CSP
violations the page reported and its description metas."""

# Run in every test context before any page script: records CSP violations.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample || ""}`));
"""

AUDIT = r"""() => {
  const bad = [];
  const say = (what, el) => bad.push(`${what}: ${(el.outerHTML || el.tagName).slice(0, 160)}`);
  for (const el of document.querySelectorAll("*")) {
    for (const a of el.attributes) {
      if (/^on/i.test(a.name)) say(`event handler ${a.name}`, el);
      if (["href", "src", "action", "data", "formaction", "srcdoc", "xlink:href", "poster", "background"]
          .includes(a.name.toLowerCase()) && /^\s*(javascript|vbscript|data:text\/html)|evil\.example/i.test(a.value)) {
        say(`url in ${a.name}`, el);
      }
    }
  }
  const elements = "iframe, frame, frameset, object, embed, base, form[action], "
    + "meta[http-equiv]:not([http-equiv='Content-Security-Policy']), "
    + "article img, article style, body style, article link, body link, "
    + "article svg:not(.fb-chart svg):not(.fb-chart svg *)";
  for (const el of document.querySelectorAll(elements)) say("element", el);
  // the site's own script files: the theme's bundle, the project's assets, the vendored libraries
  const shipped = /^(\.\.\/|\/)*(assets\/javascripts\/bundle\.[0-9a-f]+\.min\.js|assets\/(fundbook|desk)\/[\w-]+\.m?js|vendor\/vega\/vega(-lite|-embed)?\.min\.js)$/;
  const theme = /^(__md_scope=new URL\(|var palette=__md_get|var target=document\.getElementById\(location\.hash)/;
  for (const el of document.querySelectorAll("script")) {
    if ((el.getAttribute("type") || "").toLowerCase() === "application/json") continue;
    const src = el.getAttribute("src");
    if (src ? shipped.test(src) : theme.test(el.textContent)) continue;
    say("script", el);
  }
  return { bad, pwned: window.__pwned === undefined ? null : String(window.__pwned),
           violations: window.__violations || ["(violation recorder missing)"],
           descriptions: [...document.querySelectorAll("meta[name=description]")].map((m) => m.content) };
}"""
