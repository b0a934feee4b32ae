"""Where a page's Open Graph card lives: shared by build-og (writes) and the
MkDocs hook (links), so the two cannot disagree."""


def card_for(src_uri: str) -> str:
    """runs/<id>/index.md -> runs/<id>.png; any other page -> pages/<slug>.png."""
    parts = src_uri[:-3].split("/") if src_uri.endswith(".md") else src_uri.split("/")
    if len(parts) == 3 and parts[0] == "runs" and parts[2] == "index":
        return f"runs/{parts[1]}.png"
    if parts[-1] == "index" and len(parts) > 1:
        parts = parts[:-1]
    slug = "-".join(parts)
    return f"pages/{'home' if slug == 'index' else slug}.png"
