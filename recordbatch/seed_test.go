package recordbatch_test

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// testRand returns a random source seeded from RECORDBATCH_TEST_SEED, or
// from the clock; a failing test prints the seed to rerun it with.
func testRand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RECORDBATCH_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RECORDBATCH_TEST_SEED: %v", err)
		}
		seed = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed %d (rerun with RECORDBATCH_TEST_SEED=%d)", seed, seed)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}
