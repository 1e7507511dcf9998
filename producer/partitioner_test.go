package producer_test

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/producer"
)

// producerTestRand returns a random source seeded from PRODUCER_TEST_SEED
// or the clock, and logs the seed if the test fails.
func producerTestRand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PRODUCER_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PRODUCER_TEST_SEED: %v", err)
		}
		seed = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed %d (rerun with PRODUCER_TEST_SEED=%d)", seed, seed)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// Vectors from Apache Kafka's UtilsTest.testMurmur2.
var murmur2KafkaVectors = []struct {
	in   string
	want int32
}{
	{"21", -973932308},
	{"foobar", -790332482},
	{"a-little-bit-long-string", -985981536},
	{"a-little-bit-longer-string", -1486304829},
	{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
	{"abc", 479470107},
}

func TestMurmur2KafkaVectors(t *testing.T) {
	for _, v := range murmur2KafkaVectors {
		if got := producer.Murmur2([]byte(v.in)); got != v.want {
			t.Errorf("Murmur2(%q) = %d, want %d", v.in, got, v.want)
		}
	}
}

func TestKeyPartitionKafkaVectors(t *testing.T) {
	for _, v := range murmur2KafkaVectors {
		for _, n := range []int32{1, 2, 3, 7, 12, 100, 1 << 20} {
			want := (v.want & 0x7fffffff) % n
			if got := producer.KeyPartition([]byte(v.in), n); got != want {
				t.Errorf("KeyPartition(%q, %d) = %d, want %d", v.in, n, got, want)
			}
		}
	}
}

// TestKeyPartitionMatchesKgo compares with franz-go's Java compatible key
// partitioner on random keys and partition counts.
func TestKeyPartitionMatchesKgo(t *testing.T) {
	rng := producerTestRand(t)
	part := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for i := range 100000 {
		n := 1 + rng.IntN(1000)
		if i%10 == 0 {
			n = 1 + rng.IntN(1<<31-1)
		}
		key := make([]byte, rng.IntN(40))
		if i%100 == 0 {
			key = make([]byte, rng.IntN(4096))
		}
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		want := part.Partition(&kgo.Record{Key: key}, n)
		if got := producer.KeyPartition(key, int32(n)); int(got) != want {
			t.Fatalf("KeyPartition(%x, %d) = %d, kgo says %d", key, n, got, want)
		}
	}
}

func TestKeyPartitionPanicsWithoutPartitions(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("KeyPartition with 0 partitions did not panic")
		}
	}()
	producer.KeyPartition([]byte("k"), 0)
}

func BenchmarkKeyPartition(b *testing.B) {
	key := []byte("kcheck-key-0123456789")
	for b.Loop() {
		producer.KeyPartition(key, 12)
	}
}
