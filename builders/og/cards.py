"""Drawing one 1200x630 card: site name, title, key figures and, for a run,
a cash sparkline. Pillow's built-in font (shipped inside Pillow) keeps the
output free of system and network fonts, so the same inputs give the same
PNG bytes on any machine with the locked Pillow."""

import io

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 1200, 630
BG, FG, MUTED, ACCENT = (247, 248, 250), (24, 32, 48), (96, 108, 128), (55, 71, 160)
BADGE = {
    "SCORED": (20, 110, 60),
    "QUALIFIED": (20, 110, 60),
    "NOT_QUALIFIED": (170, 80, 20),
    "MALFORMED": (170, 80, 20),
    "UNSCORABLE": (160, 30, 30),
}


def _font(size):
    return ImageFont.load_default(size=size)


def _wrap(draw, text, font, width):
    lines, line = [], ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if draw.textlength(trial, font=font) <= width or not line:
            line = trial
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


def _line(text, limit=80) -> str:
    """One line of at most `limit` characters: record text may hold line breaks (Pillow refuses
    to measure them) or run very long."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def card(title: str, figures: list, kicker: str, series: list | None = None, blurb: str = "") -> bytes:
    kicker, figures = _line(kicker), [_line(f, 40) for f in figures]
    img = Image.new("RGB", (WIDTH, HEIGHT), BG)
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 0, WIDTH, 14], fill=ACCENT)
    draw.text((64, 56), "fundbook", font=_font(34), fill=ACCENT)
    draw.text((64, 100), kicker, font=_font(26), fill=MUTED)
    y = 170
    for line in _wrap(draw, title, _font(60), WIDTH - 128)[:3]:
        draw.text((64, y), line, font=_font(60), fill=FG)
        y += 74
    for line in _wrap(draw, blurb, _font(30), WIDTH - 128)[:3]:
        draw.text((64, y + 6), line, font=_font(30), fill=MUTED)
        y += 40
    x, y = 64, max(y + 24, 330)
    for fig in figures:
        fig = str(fig)
        if not fig:
            continue
        font = _font(34)
        w = draw.textlength(fig, font=font) + 32
        if x + w > WIDTH - 64:
            x, y = 64, y + 64
        colour = BADGE.get(fig, FG)
        draw.rounded_rectangle([x, y, x + w, y + 50], radius=8, outline=colour, width=3)
        draw.text((x + 16, y + 7), fig, font=font, fill=colour)
        x += w + 16
    if series and len(series) > 1:
        _sparkline(draw, series, (64, 470, WIDTH - 64, HEIGHT - 40))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def _sparkline(draw, values, box):
    x0, y0, x1, y1 = box
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1
    step = (x1 - x0) / (len(values) - 1)
    points = [(x0 + i * step, y1 - (v - lo) * (y1 - y0) / span) for i, v in enumerate(values)]
    draw.line([(x0, y1), (x1, y1)], fill=(210, 214, 222), width=2)
    draw.line(points, fill=ACCENT, width=5)
    draw.text((x0, y0 - 34), "cash by day", font=_font(22), fill=MUTED)
