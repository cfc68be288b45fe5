#!/usr/bin/env python3
"""A short sample workload through docguard with PyMongo.

A products catalogue whose documents carry a growing `reviews` array ($push), some inserts, and a
$lookup aggregate joining orders to products. FerretDB 1.x refuses $lookup (NotImplemented); the
query still goes through docguard, which sees it, so the refusal is reported and not fatal.

    python scripts/sample_workload.py mongodb://127.0.0.1:PORT [--reviews N]
"""
import argparse
import random
import sys
import time

import pymongo
from pymongo.errors import BulkWriteError, OperationFailure, WriteError


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("uri")
    ap.add_argument("--reviews", type=int, default=300, help="reviews pushed onto one product")
    a = ap.parse_args()

    rnd = random.Random(42)
    client = pymongo.MongoClient(a.uri, serverSelectionTimeoutMS=10000, appname="docguard-demo")
    db = client.shop
    db.products.drop()
    db.orders.drop()
    t0 = time.monotonic()

    products = [{"_id": f"p{i}", "name": f"product {i}", "price": round(rnd.uniform(5, 500), 2),
                 "tags": rnd.sample(["home", "garden", "tools", "kitchen", "toys", "books"], 2),
                 "reviews": []} for i in range(50)]
    db.products.insert_many(products)
    print(f"inserted {len(products)} products")

    # The anti-pattern: a reviews array that grows without bound. config/docguard.example.yaml
    # blocks $push without $slice on shop.products, as server-side validation would.
    try:
        db.products.update_one({"_id": "p0"}, {"$push": {"reviews": {"user": "u1", "stars": 5}}})
        print("unbounded $push was accepted (no block rule for shop.products in this config)")
    except WriteError as e:
        print(f"docguard blocked an unbounded $push (code {e.code}): {e.details['errmsg']}")
    # The fix the rule asks for: keep the latest 100 reviews embedded ($slice), the rest elsewhere.
    for n in range(a.reviews):
        db.products.update_one({"_id": "p0"}, {"$push": {"reviews": {"$each": [{
            "user": f"u{rnd.randrange(1000)}", "stars": rnd.randint(1, 5), "text": "review text " * 5}],
            "$slice": -100}}})
    p0 = db.products.find_one({"_id": "p0"}, {"reviews": 1})
    print(f"pushed {a.reviews} reviews onto p0 with $slice: -100 (array length now "
          f"{len(p0['reviews'])}; FerretDB 1.x ignores $slice, a real MongoDB keeps 100)")

    # A bloated document in an unordered batch: the others are written, that one is refused.
    batch = [{"_id": f"n{i}", "name": f"new product {i}", "reviews": []} for i in range(5)]
    batch[2]["manual_pdf"] = "x" * 300_000
    try:
        db.products.insert_many(batch, ordered=False)
    except BulkWriteError as e:
        errs = e.details["writeErrors"]
        print(f"insert_many: {e.details['nInserted']} inserted, index {errs[0]['index']} refused: "
              f"{errs[0]['errInfo']['rule']} {errs[0]['errInfo']['measured']} > "
              f"{errs[0]['errInfo']['bound']}")

    orders = [{"product": f"p{rnd.randrange(50)}", "qty": rnd.randint(1, 5)} for _ in range(500)]
    db.orders.insert_many(orders)
    print(f"inserted {len(orders)} orders")

    top = list(db.orders.aggregate([{"$group": {"_id": "$product", "qty": {"$sum": "$qty"}}},
                                    {"$sort": {"qty": -1}}, {"$limit": 3}]))
    print("top products by quantity:", ", ".join(f"{d['_id']}={d['qty']}" for d in top))

    # Join-heavy reads: every order read joins products. docguard warns when the share of reads
    # with $lookup passes max_lookup_ratio (see the log and /status).
    refused = 0
    for _ in range(30):
        try:
            list(db.orders.aggregate([
                {"$lookup": {"from": "products", "localField": "product", "foreignField": "_id",
                             "as": "product_doc"}},
                {"$limit": 5}]))
        except OperationFailure:
            refused += 1
        db.orders.find_one({"qty": 1})
    print(f"30 $lookup aggregates and 30 finds on orders went through docguard"
          + (f" (the upstream refused {refused} $lookups: FerretDB 1.x has none)" if refused else ""))

    print(f"products: {db.products.count_documents({})}, orders: {db.orders.count_documents({})}; "
          f"workload took {time.monotonic() - t0:.1f}s")
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
