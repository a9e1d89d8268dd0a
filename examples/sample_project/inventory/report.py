"""Reports over a stock."""

from inventory.models import Stock


def low_stock(stock: Stock, threshold: int = 5) -> list[str]:
    """SKUs whose quantity is below ``threshold``, sorted."""
    return sorted(sku for sku, qty in stock.quantities.items() if qty < threshold)


async def publish(stock: Stock) -> dict[str, int]:
    """A snapshot of the stock, ready to send."""
    return dict(stock.quantities)
