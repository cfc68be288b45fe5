// The Go driver's share of tests/integration/python/test_recording_drivers.py: run with
// WORKLOAD_URI (credentials and appName in it), WORKLOAD_DB and WORKLOAD_COLL set. Prints one
// JSON line of what it read.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := options.Client().ApplyURI(os.Getenv("WORKLOAD_URI")).SetMaxPoolSize(1).SetRetryWrites(true)
	client, err := mongo.Connect(ctx, opts)
	must(err)
	coll := client.Database(os.Getenv("WORKLOAD_DB")).Collection(os.Getenv("WORKLOAD_COLL"))
	docs := make([]interface{}, 250)
	for i := range docs {
		docs[i] = bson.D{{Key: "i", Value: i}, {Key: "pad", Value: strings.Repeat("x", 100)}}
	}
	_, err = coll.InsertMany(ctx, docs) // kind-1 documents
	must(err)
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetBatchSize(50)) // find + 4 getMores
	must(err)
	var all []bson.M
	must(cur.All(ctx, &all))
	early, err := coll.Find(ctx, bson.D{}, options.Find().SetBatchSize(10))
	must(err)
	early.Next(ctx)
	must(early.Close(ctx)) // killCursors
	res, err := coll.UpdateOne(ctx, bson.D{{Key: "i", Value: 1}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "r", Value: 1}}}}) // retryable: txnNumber
	must(err)
	fmt.Printf("{\"read\": %d, \"modified\": %d}\n", len(all), res.ModifiedCount)
	must(client.Disconnect(ctx))
}
