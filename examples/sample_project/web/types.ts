export interface Item {
  sku: string;
  name: string;
  category: Category;
}

export enum Category {
  Tool = "tool",
  Part = "part",
}

export type Sku = string;
