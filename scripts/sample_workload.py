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
from pymongo.errors import OperationFailure


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

    # one product whose reviews array keeps growing: the pattern docguard's rules watch for
    for n in range(a.reviews):
        db.products.update_one({"_id": "p0"}, {"$push": {"reviews": {
            "user": f"u{rnd.randrange(1000)}", "stars": rnd.randint(1, 5), "text": "review text " * 5}}})
    for i in range(1, 50):
        db.products.update_one({"_id": f"p{i}"}, {"$push": {"reviews": {"user": "u1", "stars": 4}}})
    p0 = db.products.find_one({"_id": "p0"}, {"reviews": 1})
    print(f"pushed {a.reviews} reviews onto p0 (array length now {len(p0['reviews'])})")

    orders = [{"product": f"p{rnd.randrange(50)}", "qty": rnd.randint(1, 5)} for _ in range(500)]
    db.orders.insert_many(orders)
    print(f"inserted {len(orders)} orders")

    top = list(db.orders.aggregate([{"$group": {"_id": "$product", "qty": {"$sum": "$qty"}}},
                                    {"$sort": {"qty": -1}}, {"$limit": 3}]))
    print("top products by quantity:", ", ".join(f"{d['_id']}={d['qty']}" for d in top))

    try:
        joined = list(db.orders.aggregate([
            {"$lookup": {"from": "products", "localField": "product", "foreignField": "_id",
                         "as": "product_doc"}},
            {"$limit": 5}]))
        print(f"$lookup returned {len(joined)} joined orders")
    except OperationFailure as e:
        print(f"$lookup went through docguard; the upstream refused it: {e.details.get('errmsg', e)}")

    print(f"products: {db.products.count_documents({})}, orders: {db.orders.count_documents({})}; "
          f"workload took {time.monotonic() - t0:.1f}s")
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
