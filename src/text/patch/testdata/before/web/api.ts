import { Router, Request, Response } from "express";
import { Inventory } from "./inventory";

const router = Router();
const inventory = new Inventory();

router.get("/items", (_req: Request, res: Response) => {
  res.json(inventory.available());
});

router.get("/items/:sku", (req: Request, res: Response) => {
  const item = inventory.get(req.params.sku);
  if (!item) {
    res.status(404).json({ error: "not found" });
    return;
  }
  res.json(item);
});

router.post("/items", (req: Request, res: Response) => {
  const { sku, name, quantity } = req.body;
  inventory.add({ sku, name, quantity });
  res.status(201).json({ ok: true });
});

router.post("/items/:sku/take", (req: Request, res: Response) => {
  const amount = Number(req.body.amount);
  inventory.take(req.params.sku, amount);
  res.json({ ok: true });
});

router.delete("/items/:sku", (req: Request, res: Response) => {
  inventory.remove(req.params.sku);
  res.status(204).end();
});

export default router;
