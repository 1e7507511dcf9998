package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kcheck/kcheck/kafka"
)

// A node as the control endpoint lists it.
type controlNode struct {
	ID   int32  `json:"id"`
	Addr string `json:"addr"`
}

// The actions Serve does to a node, by the last element of its path.
var actions = map[string]func(c *kafka.Cluster, ctx context.Context, id int) error{
	"pause":  func(c *kafka.Cluster, _ context.Context, id int) error { return c.Pause(id) },
	"resume": func(c *kafka.Cluster, _ context.Context, id int) error { return c.Resume(id) },
	"kill":   func(c *kafka.Cluster, _ context.Context, id int) error { return c.Kill(id) },
	"stop":   func(c *kafka.Cluster, _ context.Context, id int) error { return c.StopNode(id) },
	"start":  (*kafka.Cluster).StartNode,
}

// Serve answers, on l until it is closed, the requests of kcheck proxy
// --cluster (Remote) to c's nodes: GET /nodes lists them; POST
// /nodes/ID/pause, resume, kill, stop and start act on one, one action at a
// time per node, and answer 200, or an error in words.
func Serve(l net.Listener, c *kafka.Cluster) *http.Server {
	locks := make([]sync.Mutex, len(c.Nodes())+1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /nodes", func(w http.ResponseWriter, _ *http.Request) {
		var ns []controlNode
		for _, n := range c.Nodes() {
			ns = append(ns, controlNode{ID: int32(n.ID), Addr: n.Addr})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(ns)
	})
	mux.HandleFunc("POST /nodes/{id}/{action}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		act, ok := actions[r.PathValue("action")]
		switch {
		case err != nil || id < 1 || id >= len(locks):
			http.Error(w, fmt.Sprintf("no node %s: the cluster has nodes 1 to %d", r.PathValue("id"), len(locks)-1), http.StatusNotFound)
			return
		case !ok:
			http.Error(w, fmt.Sprintf("no action %q (pause, resume, kill, stop, start)", r.PathValue("action")), http.StatusNotFound)
			return
		}
		locks[id].Lock()
		defer locks[id].Unlock()
		if err := act(c, r.Context(), id); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return srv
}

// Remote is a cluster served by Serve in another process, at its control
// address, and reached over the Kafka protocol for what its brokers tell
// (Wire): what kcheck proxy --cluster acts through.
type Remote struct {
	Wire
	base   string
	client *http.Client
	ids    []int32
}

// maxControlAnswer bounds what Remote reads of an answer.
const maxControlAnswer = 1 << 16

// Dial returns the cluster served at addr (host:port), once it has listed
// its nodes.
func Dial(ctx context.Context, addr string) (*Remote, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("nemesis: control address %q: want HOST:PORT: %w", addr, err)
	}
	r := &Remote{base: "http://" + addr, client: &http.Client{}}
	body, err := r.do(ctx, http.MethodGet, "/nodes")
	if err != nil {
		return nil, fmt.Errorf("nemesis: the cluster's control at %s (kcheck kafka --control) does not answer: %w", addr, err)
	}
	var ns []controlNode
	if err := json.Unmarshal(body, &ns); err != nil || len(ns) == 0 {
		return nil, fmt.Errorf("nemesis: %s answered no list of nodes: is it kcheck kafka --control?", addr)
	}
	for _, n := range ns {
		r.ids = append(r.ids, n.ID)
		r.Bootstrap = append(r.Bootstrap, n.Addr)
	}
	return r, nil
}

func (r *Remote) do(ctx context.Context, method, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxControlAnswer))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(strings.TrimSpace(string(body)))
	}
	return body, nil
}

func (r *Remote) act(ctx context.Context, node int32, action string) error {
	_, err := r.do(ctx, http.MethodPost, fmt.Sprintf("/nodes/%d/%s", node, action))
	return err
}

// Nodes returns the cluster's node ids.
func (r *Remote) Nodes(context.Context) ([]int32, error) { return r.ids, nil }

// Pause stops node's process (SIGSTOP).
func (r *Remote) Pause(ctx context.Context, node int32) error { return r.act(ctx, node, "pause") }

// Resume continues node's process (SIGCONT).
func (r *Remote) Resume(ctx context.Context, node int32) error { return r.act(ctx, node, "resume") }

// Kill kills node's process (SIGKILL).
func (r *Remote) Kill(ctx context.Context, node int32) error { return r.act(ctx, node, "kill") }

// Stop stops node cleanly (SIGTERM) and returns once it has exited.
func (r *Remote) Stop(ctx context.Context, node int32) error { return r.act(ctx, node, "stop") }

// Start starts node again on its data and returns once it answers.
func (r *Remote) Start(ctx context.Context, node int32) error { return r.act(ctx, node, "start") }
