package idindex

import "testing"

func TestIndex(t *testing.T) {
	var x Index
	ids := []int64{1, 2, 4095, 4096, 9000, 1 << 40, -3}
	for i, id := range ids {
		if _, ok := x.Get(id); ok {
			t.Fatalf("id %d found before Put", id)
		}
		x.Put(id, RefOf(i, 10*i))
	}
	for i, id := range ids {
		r, ok := x.Get(id)
		if !ok || r.Part() != i || r.I() != 10*i {
			t.Fatalf("id %d: %v %v, want part %d index %d", id, r, ok, i, 10*i)
		}
	}
	if _, ok := x.Get(3); ok {
		t.Fatal("id 3 was never put")
	}
	// With 7 entries the table holds ids below its first block (4096) or
	// 2*7+1024: 4096, 9000, 1<<40 and -3 go in the map.
	if len(x.sparse) != 4 || len(x.dense) != 1 {
		t.Fatalf("%d ids in the map and %d blocks, want 4 and 1", len(x.sparse), len(x.dense))
	}
}
