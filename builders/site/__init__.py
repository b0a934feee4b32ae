"""build-site: the MkDocs hook (hooks.py) and the modules it renders runs/ with, one page or concern each;
serve.py serves a built site (`make preview`). This package imports none of them.
"""

__all__ = ["bands", "bench", "cards", "charts", "comparisons", "counted", "csp", "escape", "figures", "fmt", "freeze",
           "glossary", "hooks", "intervals", "leaderboard", "marks", "og_paths", "outcomes", "overview", "pages",
           "parquet", "practitioner_page", "ranking", "readable", "reading", "records", "register", "scale",
           "sensitivity", "serve", "studies", "transcript", "unscored", "vendor", "weights"]
