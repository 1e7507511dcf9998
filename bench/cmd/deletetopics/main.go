// Command deletetopics deletes topics from a Kafka cluster, for the bench
// scripts (bench/overhead.sh), which delete each run's topic after it so
// that the broker does not slow down under many written topics:
//
//	deletetopics --brokers HOST:PORT TOPIC...
//
// A topic that does not exist is no error. Exit status: 0 deleted, 2 not.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/topics"
)

func main() {
	brokers := flag.String("brokers", "", "bootstrap `HOST:PORT`s, comma-separated")
	timeout := flag.Duration("timeout", 40*time.Second, "give up after `DURATION`")
	flag.Parse()
	if *brokers == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: deletetopics --brokers HOST:PORT TOPIC...")
		os.Exit(2)
	}
	if err := deleteTopics(*brokers, *timeout, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "deletetopics:", err)
		os.Exit(2)
	}
}

func deleteTopics(brokers string, timeout time.Duration, names []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return topics.Delete(ctx, cl, names...)
}
