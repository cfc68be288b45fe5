// Go driver (go.mongodb.org/mongo-driver v1.17) through docguard.
//
// Environment: DOCGUARD_URI (required), DOCGUARD_ADMIN (host:port of the admin listener; metrics
// checks are skipped without it), DOCGUARD_DIRECT=1 when DOCGUARD_URI is FerretDB itself.
package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/event"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
	"go.mongodb.org/mongo-driver/mongo/writeconcern"
)

var (
	uri     = os.Getenv("DOCGUARD_URI")
	admin   = os.Getenv("DOCGUARD_ADMIN")
	proxied = os.Getenv("DOCGUARD_DIRECT") != "1"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func connect(t *testing.T, u string, opts ...*options.ClientOptions) *mongo.Client {
	t.Helper()
	if uri == "" {
		t.Fatal("set DOCGUARD_URI (tests/integration/run.sh does)")
	}
	all := append([]*options.ClientOptions{options.Client().ApplyURI(u).SetServerSelectionTimeout(10 * time.Second)}, opts...)
	c, err := mongo.Connect(ctx(t), all...)
	if err != nil {
		t.Fatalf("connect %s: %v", u, err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

func testDB(t *testing.T, c *mongo.Client) *mongo.Database {
	name := fmt.Sprintf("it_go_%d_%s", os.Getpid(), strings.ToLower(regexp.MustCompile(`\W`).ReplaceAllString(t.Name(), "_")))
	if len(name) > 60 {
		name = name[:60]
	}
	db := c.Database(name)
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	return db
}

var seriesRe = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)`)
var labelRe = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// metricSum sums the series of name whose labels include all of labels.
func metricSum(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	sum := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := seriesRe.FindStringSubmatch(line)
		if m == nil || m[1] != name {
			continue
		}
		got := map[string]string{}
		for _, kv := range labelRe.FindAllStringSubmatch(m[2], -1) {
			got[kv[1]] = kv[2]
		}
		ok := true
		for k, v := range labels {
			if got[k] != v {
				ok = false
			}
		}
		if ok {
			v, _ := strconv.ParseFloat(m[3], 64)
			sum += v
		}
	}
	return sum
}

func TestCRUD(t *testing.T) {
	c := testDB(t, connect(t, uri)).Collection("crud")
	cx := ctx(t)
	res, err := c.InsertOne(cx, bson.M{"sku": "a1", "price": 20, "tags": bson.A{"home"}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.UpdateOne(cx, bson.M{"_id": res.InsertedID}, bson.M{"$set": bson.M{"price": 25}, "$push": bson.M{"tags": "sale"}})
	if err != nil || u.ModifiedCount != 1 {
		t.Fatalf("update: %v %+v", err, u)
	}
	var doc struct {
		Price int      `bson:"price"`
		Tags  []string `bson:"tags"`
	}
	if err := c.FindOne(cx, bson.M{"sku": "a1"}).Decode(&doc); err != nil || doc.Price != 25 || len(doc.Tags) != 2 {
		t.Fatalf("find: %v %+v", err, doc)
	}
	if r, err := c.ReplaceOne(cx, bson.M{"sku": "a1"}, bson.M{"sku": "a1", "price": 30}); err != nil || r.ModifiedCount != 1 {
		t.Fatalf("replace: %v", err)
	}
	if r, err := c.UpdateOne(cx, bson.M{"sku": "b2"}, bson.M{"$set": bson.M{"price": 1}}, options.Update().SetUpsert(true)); err != nil || r.UpsertedID == nil {
		t.Fatalf("upsert: %v", err)
	}
	if n, err := c.CountDocuments(cx, bson.M{}); err != nil || n != 2 {
		t.Fatalf("count: %v %d", err, n)
	}
	if _, err := c.InsertOne(cx, bson.M{"_id": res.InsertedID}); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("expected duplicate key error, got %v", err)
	}
	if r, err := c.DeleteMany(cx, bson.M{}); err != nil || r.DeletedCount != 2 {
		t.Fatalf("delete: %v", err)
	}
}

func TestInsertMany(t *testing.T) {
	c := testDB(t, connect(t, uri)).Collection("many")
	cx := ctx(t)
	docs := make([]interface{}, 5000)
	for i := range docs {
		docs[i] = bson.M{"i": i, "payload": strings.Repeat("x", 100)}
	}
	r, err := c.InsertMany(cx, docs)
	if err != nil || len(r.InsertedIDs) != 5000 {
		t.Fatalf("insertMany: %v", err)
	}
	if n, _ := c.CountDocuments(cx, bson.M{}); n != 5000 {
		t.Fatalf("count %d", n)
	}
}

func TestCursorBatches(t *testing.T) {
	var mu sync.Mutex
	getMores := 0
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "getMore" {
			mu.Lock()
			getMores++
			mu.Unlock()
		}
	}}
	c := testDB(t, connect(t, uri, options.Client().SetMonitor(mon))).Collection("cursor")
	cx := ctx(t)
	docs := make([]interface{}, 2000)
	for i := range docs {
		docs[i] = bson.M{"i": i}
	}
	if _, err := c.InsertMany(cx, docs); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Find(cx, bson.M{}, options.Find().SetSort(bson.M{"i": 1}).SetBatchSize(10))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for cur.Next(cx) {
		var d struct {
			I int `bson:"i"`
		}
		if err := cur.Decode(&d); err != nil || d.I != want {
			t.Fatalf("doc %d: %v %d", want, err, d.I)
		}
		want++
	}
	if cur.Err() != nil || want != 2000 {
		t.Fatalf("cursor: %v after %d", cur.Err(), want)
	}
	mu.Lock()
	defer mu.Unlock()
	if getMores < 190 {
		t.Fatalf("expected ~199 getMores, saw %d", getMores)
	}
}

func TestAggregate(t *testing.T) {
	c := testDB(t, connect(t, uri)).Collection("orders")
	cx := ctx(t)
	docs := make([]interface{}, 700)
	expected := 0
	for i := range docs {
		st := "B"
		if i%2 == 1 {
			st = "A"
			expected += i
		}
		docs[i] = bson.M{"cust": fmt.Sprintf("c%d", i%7), "amount": i, "status": st}
	}
	if _, err := c.InsertMany(cx, docs); err != nil {
		t.Fatal(err)
	}
	// FerretDB 1.24 computes only the first accumulator of a $group: one per stage.
	cur, err := c.Aggregate(cx, mongo.Pipeline{
		{{Key: "$match", Value: bson.M{"status": "A"}}},
		{{Key: "$group", Value: bson.M{"_id": "$cust", "total": bson.M{"$sum": "$amount"}}}},
		{{Key: "$sort", Value: bson.M{"_id": 1}}},
	}, options.Aggregate().SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	var out []struct {
		ID    string `bson:"_id"`
		Total int    `bson:"total"`
	}
	if err := cur.All(cx, &out); err != nil {
		t.Fatal(err)
	}
	sum := 0
	ids := []string{}
	for _, d := range out {
		sum += d.Total
		ids = append(ids, d.ID)
	}
	if len(out) != 7 || sum != expected || !sort.StringsAreSorted(ids) {
		t.Fatalf("aggregate: %+v", out)
	}
}

func TestBulkWrite(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(fmt.Sprintf("ordered=%v", ordered), func(t *testing.T) {
			c := testDB(t, connect(t, uri)).Collection("bulk")
			cx := ctx(t)
			seed := make([]interface{}, 10)
			for i := range seed {
				seed[i] = bson.M{"_id": i, "v": 0}
			}
			if _, err := c.InsertMany(cx, seed); err != nil {
				t.Fatal(err)
			}
			r, err := c.BulkWrite(cx, []mongo.WriteModel{
				mongo.NewInsertOneModel().SetDocument(bson.M{"_id": 100, "v": 1}),
				mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": 1}).SetUpdate(bson.M{"$set": bson.M{"v": 5}}),
				mongo.NewUpdateManyModel().SetFilter(bson.M{"_id": bson.M{"$gte": 5, "$lt": 10}}).SetUpdate(bson.M{"$inc": bson.M{"v": 2}}),
				mongo.NewReplaceOneModel().SetFilter(bson.M{"_id": 2}).SetReplacement(bson.M{"v": 7}),
				mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": 200}).SetUpdate(bson.M{"$set": bson.M{"v": 9}}).SetUpsert(true),
				mongo.NewDeleteOneModel().SetFilter(bson.M{"_id": 3}),
				mongo.NewDeleteManyModel().SetFilter(bson.M{"_id": bson.M{"$in": bson.A{4, 100}}}),
			}, options.BulkWrite().SetOrdered(ordered))
			if err != nil {
				t.Fatal(err)
			}
			if r.InsertedCount != 1 || r.MatchedCount != 7 || r.ModifiedCount != 7 || r.UpsertedCount != 1 || r.DeletedCount != 3 {
				t.Fatalf("bulk result %+v", r)
			}
			_, err = c.BulkWrite(cx, []mongo.WriteModel{
				mongo.NewInsertOneModel().SetDocument(bson.M{"_id": 300}),
				mongo.NewInsertOneModel().SetDocument(bson.M{"_id": 1}),
				mongo.NewInsertOneModel().SetDocument(bson.M{"_id": 301}),
			}, options.BulkWrite().SetOrdered(ordered))
			var bwe mongo.BulkWriteException
			if !errors.As(err, &bwe) || len(bwe.WriteErrors) != 1 || bwe.WriteErrors[0].Index != 1 {
				t.Fatalf("expected one write error at index 1, got %v", err)
			}
			n, _ := c.CountDocuments(cx, bson.M{"_id": 301})
			if (n == 0) != ordered {
				t.Fatalf("ordered=%v but _id 301 count=%d", ordered, n)
			}
		})
	}
}

func TestUnacknowledgedWrites(t *testing.T) {
	if !proxied {
		t.Skip("FerretDB 1.24 replies to moreToCome requests; only meaningful through docguard")
	}
	cl := connect(t, uri, options.Client().SetMaxPoolSize(1))
	db := testDB(t, cl)
	cx := ctx(t)
	w0 := db.Collection("w0", options.Collection().SetWriteConcern(writeconcern.Unacknowledged()))
	docs := make([]interface{}, 300)
	for i := range docs {
		docs[i] = bson.M{"_id": i}
	}
	if _, err := w0.InsertMany(cx, docs); err != nil && !errors.Is(err, mongo.ErrUnacknowledgedWrite) {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := db.Collection("w0").CountDocuments(cx, bson.M{})
		if err != nil {
			t.Fatal(err)
		}
		if n == 300 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of 300 w:0 documents visible", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestCompression(t *testing.T) {
	for _, comp := range []string{"snappy", "zlib", "zstd"} {
		t.Run(comp, func(t *testing.T) {
			check := proxied && admin != ""
			before := 0.0
			if check {
				before = metricSum(t, "docguard_compressed_messages_total", map[string]string{"compressor": comp})
			}
			u := uri
			switch {
			case strings.Contains(u, "?"):
				u += "&"
			case strings.Count(u, "/") == 2:
				u += "/?"
			default:
				u += "?"
			}
			c := testDB(t, connect(t, u+"compressors="+comp)).Collection("comp")
			cx := ctx(t)
			docs := make([]interface{}, 500)
			for i := range docs {
				docs[i] = bson.M{"i": i, "text": strings.Repeat("compress me ", 20)}
			}
			if _, err := c.InsertMany(cx, docs); err != nil {
				t.Fatal(err)
			}
			cur, err := c.Find(cx, bson.M{"i": bson.M{"$gte": 100}}, options.Find().SetBatchSize(50))
			if err != nil {
				t.Fatal(err)
			}
			var rows []bson.M
			if err := cur.All(cx, &rows); err != nil || len(rows) != 400 {
				t.Fatalf("find: %v %d", err, len(rows))
			}
			if check {
				after := metricSum(t, "docguard_compressed_messages_total", map[string]string{"compressor": comp})
				if after <= before {
					t.Fatalf("docguard_compressed_messages_total{compressor=%q} did not increase (%v -> %v)", comp, before, after)
				}
			}
		})
	}
}

func TestTopologyOnlyDocguard(t *testing.T) {
	hostPort := strings.SplitN(strings.SplitN(strings.TrimPrefix(uri, "mongodb://"), "/", 2)[0], "?", 2)[0]
	var mu sync.Mutex
	seen := map[string]bool{}
	var lastKind string
	sm := &event.ServerMonitor{
		ServerOpening: func(e *event.ServerOpeningEvent) { mu.Lock(); seen[string(e.Address)] = true; mu.Unlock() },
		TopologyDescriptionChanged: func(e *event.TopologyDescriptionChangedEvent) {
			mu.Lock()
			defer mu.Unlock()
			for _, s := range e.NewDescription.Servers {
				seen[string(s.Addr)] = true
			}
			lastKind = e.NewDescription.Kind.String()
		},
	}
	cl := connect(t, "mongodb://"+hostPort, options.Client().SetServerMonitor(sm))
	db := testDB(t, cl)
	cx := ctx(t)
	if _, err := db.Collection("t").InsertOne(cx, bson.M{"x": 1}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	var hello bson.M
	if err := cl.Database("admin").RunCommand(cx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		t.Fatal(err)
	}
	if proxied {
		// The default persona: primary of a one-member set whose only member is docguard.
		if hello["setName"] != "docguard" || hello["primary"] != hostPort || hello["me"] != hostPort {
			t.Fatalf("hello %v: want setName docguard, primary and me %s", hello, hostPort)
		}
		if hosts, ok := hello["hosts"].(bson.A); !ok || len(hosts) != 1 || hosts[0] != hostPort {
			t.Fatalf("hello hosts %v, want [%s]", hello["hosts"], hostPort)
		}
	} else {
		for _, k := range []string{"hosts", "setName", "primary", "me"} {
			if _, ok := hello[k]; ok {
				t.Fatalf("hello leaks %s: %v", k, hello[k])
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || !seen[hostPort] {
		t.Fatalf("driver saw addresses %v, want only %s", seen, hostPort)
	}
	if proxied {
		if lastKind != "ReplicaSetWithPrimary" {
			t.Fatalf("topology kind %q, want ReplicaSetWithPrimary", lastKind)
		}
		if _, ok := hello["msg"]; ok {
			t.Fatalf("hello msg %v: the replica_set persona sends none", hello["msg"])
		}
	}
}
