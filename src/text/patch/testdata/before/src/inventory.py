"""Inventory management for the warehouse service."""

import logging
from dataclasses import dataclass, field
from typing import Dict, List, Optional

log = logging.getLogger(__name__)


@dataclass
class Item:
    sku: str
    name: str
    quantity: int = 0
    tags: List[str] = field(default_factory=list)

    def is_available(self) -> bool:
        return self.quantity > 0


class Inventory:
    def __init__(self) -> None:
        self._items: Dict[str, Item] = {}

    def add(self, item: Item) -> None:
        if item.sku in self._items:
            raise ValueError(f"duplicate sku {item.sku}")
        self._items[item.sku] = item
        log.info("added %s", item.sku)

    def remove(self, sku: str) -> Optional[Item]:
        return self._items.pop(sku, None)

    def restock(self, sku: str, amount: int) -> None:
        item = self._items[sku]
        item.quantity += amount
        log.info("restocked %s by %d", sku, amount)

    def take(self, sku: str, amount: int) -> None:
        item = self._items[sku]
        if item.quantity < amount:
            raise ValueError("not enough stock")
        item.quantity -= amount
        log.info("took %d of %s", amount, sku)

    def available(self) -> List[Item]:
        return [item for item in self._items.values() if item.is_available()]

    def by_tag(self, tag: str) -> List[Item]:
        return [item for item in self._items.values() if tag in item.tags]

    def total_quantity(self) -> int:
        total = 0
        for item in self._items.values():
            total += item.quantity
        return total
