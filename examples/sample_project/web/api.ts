import { Item } from "./types";

/** The base URL of the inventory service. */
export const API_ROOT = "/api/v1";

/** Fetches one item by SKU. */
export async function fetchItem(sku: string): Promise<Item> {
  const res = await fetch(`${API_ROOT}/items/${encodeURIComponent(sku)}`);
  return (await res.json()) as Item;
}

export class StockClient {
  constructor(private readonly root: string = API_ROOT) {}

  /** Lists SKUs below a threshold. */
  async lowStock(threshold = 5): Promise<string[]> {
    const res = await fetch(`${this.root}/low-stock?threshold=${threshold}`);
    return res.json();
  }
}
