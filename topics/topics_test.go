package topics

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCreateDelete creates two topics on kfake, finds every partition led,
// deletes them (and one that never existed, no error) and finds them gone.
func TestCreateDelete(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Create(ctx, cl, 3, BrokerDefault, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if got := known(ctx, t, cl, "a", "b"); got != 6 {
		t.Fatalf("after Create: %d partitions of a and b, want 6", got)
	}
	if err := Create(ctx, cl, 3, 1, "a"); err == nil {
		t.Fatal("creating a again: no error")
	}
	if err := Delete(ctx, cl, "a", "b", "never"); err != nil {
		t.Fatal(err)
	}
	if got := known(ctx, t, cl, "a", "b"); got != 0 {
		t.Fatalf("after Delete: %d partitions of a and b, want 0", got)
	}
}

// known counts the partitions the metadata shows for the topics.
func known(ctx context.Context, t *testing.T, cl *kgo.Client, names ...string) int {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	for _, name := range names {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, mt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tp := range resp.Topics {
		if tp.ErrorCode == 0 {
			n += len(tp.Partitions)
		}
	}
	return n
}

// TestCreateReplicationFactor: on three brokers, rf 2 gives each partition
// two replicas, BrokerDefault kfake's default (three), and rf 4 is refused.
func TestCreateReplicationFactor(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for name, rf := range map[string]int16{"two": 2, "default": BrokerDefault} {
		if err := Create(ctx, cl, 2, rf, name); err != nil {
			t.Fatalf("rf %d: %v", rf, err)
		}
		want := int(rf)
		if rf == BrokerDefault {
			want = 3
		}
		req := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, mt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range resp.Topics {
			for _, p := range tp.Partitions {
				if len(p.Replicas) != want {
					t.Errorf("rf %d: partition %d has replicas %v, want %d", rf, p.Partition, p.Replicas, want)
				}
			}
		}
	}
	if err := Create(ctx, cl, 2, 4, "four"); err == nil {
		t.Error("rf 4 on 3 brokers: no error")
	}
}
