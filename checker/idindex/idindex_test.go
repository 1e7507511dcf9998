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
	if len(x.sparse) != 2 {
		t.Fatalf("%d ids in the map, want the far one and the negative one", len(x.sparse))
	}
}
