"""Magento-admin-style data grids: keyword search, per-column filters, sorting, paging and mass actions.

A grid is declared once (columns with their SQL expression, filter kind and how a cell renders); the
request's query string (``search``, ``f_<col>``, ``f_<col>_from``/``_to``, ``sort``, ``dir``, ``page``,
``limit``) becomes SQL with bound parameters, so user input never reaches SQL text. Mass actions post
the ticked row ids and the chosen action to the grid's ``massAction`` URL, where the admin app runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask import request

from webarena_gym.envs.local.framework import Page, page_url, paginate, sort_clause

LIMITS = (20, 30, 50, 100, 200)


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    sql: str
    filter: str = "text"  # "text" (LIKE), "select" (equality), "range" (from/to) or "" (none)
    options: tuple[tuple[str, str], ...] = ()  # (value, label) for select filters and labelled cells
    keyword: bool = False  # searched by the keyword box
    render: str = "text"  # text, money, datetime, thumbnail, or "label" (cell shows the option's label)
    sortable: bool = True
    visible: bool = True  # False: selected for links and checkboxes, not shown

    def cell(self, row: Any) -> Any:
        value = row[self.key]
        if self.render == "label":
            return dict(self.options).get(str(value), value)
        return value


@dataclass(frozen=True)
class Grid:
    title: str
    source: str  # FROM ... [JOIN ...] without WHERE/ORDER/LIMIT
    columns: tuple[Column, ...]
    default_sort: str
    default_dir: str = "asc"
    id_key: str = "id"  # the column whose value the row checkbox and row link carry
    row_link: str = ""  # format string with the row's columns, e.g. "/catalog/product/edit/id/{id}/"
    link_label: str = "Edit"
    fixed_where: tuple[str, ...] = field(default_factory=tuple)
    mass_actions: tuple[tuple[str, str], ...] = ()  # (action value, label) offered above the grid
    add_button: tuple[str, str] = ("", "")  # (label, endpoint) of the page's primary button
    per_page: int = 20  # rows per page when the request names no ``limit`` (one of ``LIMITS``)

    def column(self, key: str) -> Column:
        return next(c for c in self.columns if c.key == key)

    def run(self) -> dict[str, Any]:
        where = list(self.fixed_where)
        params: list[Any] = []
        keyword = request.args.get("search", "").strip()
        if keyword:
            parts = [f"{c.sql} LIKE ?" for c in self.columns if c.keyword]
            where.append("(" + " OR ".join(parts) + ")")
            params += [f"%{keyword}%"] * len(parts)
        active: list[tuple[str, str, str]] = []  # (label, shown value, URL without this filter)
        for col in self.columns:
            if col.filter in ("text", "select"):
                value = request.args.get(f"f_{col.key}", "").strip()
                if value:
                    shown = dict(col.options).get(value, value) if col.filter == "select" else value
                    active.append((col.label, shown, page_url(**{f"f_{col.key}": None, "page": None})))
                    where.append(f"{col.sql} LIKE ?" if col.filter == "text" else f"CAST({col.sql} AS TEXT) = ?")
                    params.append(f"%{value}%" if col.filter == "text" else value)
            elif col.filter == "range":
                bounds = []
                for bound, op in (("from", ">="), ("to", "<=")):
                    value = request.args.get(f"f_{col.key}_{bound}", "").strip()
                    try:
                        number = float(value)
                    except ValueError:
                        continue
                    bounds.append(f"{bound} {value}")
                    where.append(f"{col.sql} {op} ?")
                    params.append(number)
                if bounds:
                    drop = {f"f_{col.key}_from": None, f"f_{col.key}_to": None, "page": None}
                    active.append((col.label, " ".join(bounds), page_url(**drop)))
        sortable = {c.key: c.sql for c in self.columns if c.sortable}
        order, sort, direction = sort_clause(sortable, self.default_sort, self.default_dir)
        select = ", ".join(f"{c.sql} AS {c.key}" for c in self.columns)
        sql = f"SELECT {select} {self.source}" + (f" WHERE {' AND '.join(where)}" if where else "")
        limit = request.args.get("limit", type=int)
        page: Page = paginate(f"{sql} {order}, 1", params, per_page=limit if limit in LIMITS else self.per_page)
        return {
            "grid": self,
            "page": page,
            "sort": sort,
            "direction": direction,
            "keyword": keyword,
            "active": active,
            "filters": {k: v for k, v in request.args.items() if k.startswith("f_")},
            "limits": LIMITS,
        }
