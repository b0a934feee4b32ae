"""Business-day calendars: day index -> calendar-day offset.

Day 1 is a Monday; business days run Monday to Friday, so the nights after a
Friday span three calendar days. Day 0 is the Friday before day 1.
"""


def weekday_offsets(carry_end: int, holidays=()):
    """Offsets for days 0..carry_end+1 (the extra day bounds the last night)."""
    offsets = [-3]
    calendar_day = 0
    while len(offsets) < carry_end + 2:
        if calendar_day % 7 < 5 and calendar_day not in holidays:
            offsets.append(calendar_day)
        calendar_day += 1
    return offsets


def calendar(carry_end: int, start_date: str = "2026-09-07", holidays=()) -> dict:
    return {"start_date": start_date, "offsets": weekday_offsets(carry_end, holidays)}
