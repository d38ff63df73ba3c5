"""Magento-admin-style data grids: keyword search, per-column filters, sorting and pagination from the URL.

A grid is declared once (columns with their SQL expression and filter kind); the request's query
string (``search``, ``f_<col>``, ``f_<col>_from``/``_to``, ``sort``, ``dir``, ``page``, ``limit``) becomes
SQL with bound parameters, so user input never reaches SQL text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask import request

from envs.local.framework import Page, paginate, sort_clause

LIMITS = (20, 30, 50, 100, 200)


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    sql: str
    filter: str = "text"  # "text" (LIKE), "select" (equality), "range" (from/to) or "" (none)
    options: tuple[tuple[str, str], ...] = ()  # (value, label) for select filters
    keyword: bool = False  # searched by the keyword box
    money: bool = False


@dataclass(frozen=True)
class Grid:
    title: str
    source: str  # FROM ... [JOIN ...] [WHERE ...] without ORDER/LIMIT
    columns: tuple[Column, ...]
    default_sort: str
    default_dir: str = "asc"
    row_link: str = ""  # format string with {id}
    link_label: str = "Edit"
    fixed_where: tuple[str, ...] = field(default_factory=tuple)

    def run(self) -> dict[str, Any]:
        where, params = list(self.fixed_where), []
        keyword = request.args.get("search", "").strip()
        if keyword:
            parts = [f"{c.sql} LIKE ?" for c in self.columns if c.keyword]
            where.append("(" + " OR ".join(parts) + ")")
            params += [f"%{keyword}%"] * len(parts)
        active: dict[str, str] = {}
        for col in self.columns:
            if col.filter in ("text", "select"):
                value = request.args.get(f"f_{col.key}", "").strip()
                if value:
                    active[col.key] = value
                    where.append(f"{col.sql} LIKE ?" if col.filter == "text" else f"CAST({col.sql} AS TEXT) = ?")
                    params.append(f"%{value}%" if col.filter == "text" else value)
            elif col.filter == "range":
                for bound, op in (("from", ">="), ("to", "<=")):
                    value = request.args.get(f"f_{col.key}_{bound}", "").strip()
                    if value:
                        try:
                            number = float(value)
                        except ValueError:
                            continue
                        active[f"{col.key}_{bound}"] = value
                        where.append(f"{col.sql} {op} ?")
                        params.append(number)
        order, sort, direction = sort_clause({c.key: c.sql for c in self.columns}, self.default_sort, self.default_dir)
        select = ", ".join(f"{c.sql} AS {c.key}" for c in self.columns)
        sql = f"SELECT {select} {self.source}" + (f" WHERE {' AND '.join(where)}" if where else "")
        limit = request.args.get("limit", type=int)
        page: Page = paginate(f"{sql} {order}, 1", params, per_page=limit if limit in LIMITS else 20)
        return {
            "grid": self,
            "page": page,
            "sort": sort,
            "direction": direction,
            "keyword": keyword,
            "active": active,
            "limits": LIMITS,
        }
