package builds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in            string
		version, path string
		err           string // a part of the error, or "" for none
	}{
		{in: "java@4.0.0", version: "4.0.0"},
		{in: "java@4.5.0-SNAPSHOT", version: "4.5.0-SNAPSHOT"},
		{in: "java@/src/kafka/clients/build/libs/kafka-clients.jar", path: "/src/kafka/clients/build/libs/kafka-clients.jar"},
		{in: "java@kafka-clients.jar", path: "kafka-clients.jar"},
		{in: "java@./k", path: "./k"},
		{in: "java@~/k.jar", path: "~/k.jar"},
		{in: "kgo@/src/franz-go", path: "/src/franz-go"},
		{in: "kgo@franz-go", path: "franz-go"}, // kgo takes only a path
		{in: "kgo@v1.22.3", path: "v1.22.3"},   // and so this is one
		{in: "sarama@../sarama", path: "../sarama"},
		{in: "librdkafka@/opt/librdkafka", path: "/opt/librdkafka"},
		{in: "librdkafka@2.8.0", version: "2.8.0"},
		{in: "kafkajs@2.2.4", version: "2.2.4"},
		{in: "kafkajs@kafkajs-2.2.4.tgz", path: "kafkajs-2.2.4.tgz"},
		{in: "aiokafka@0.13.0", version: "0.13.0"},
		{in: "aiokafka@0.14.0rc1", version: "0.14.0rc1"},
		{in: "aiokafka@./aiokafka", path: "./aiokafka"},
		{in: "kafka-python@2.0.2", version: "2.0.2"},
		{in: "kafka-python@dist/kafka_python-3.0.12-py3-none-any.whl", path: "dist/kafka_python-3.0.12-py3-none-any.whl"},
		{in: "kafka-python", err: "not NAME@VERSION or NAME@PATH"},
		{in: "nope@1.0", err: `nope@1.0: unknown client "nope" (a build can be made of: java, kgo, sarama, librdkafka, kafkajs, aiokafka, kafka-python)`},
		{in: "java-4.3.1@4.0.0", err: `unknown client "java-4.3.1"`},
		{in: "ours-on@1", err: `unknown client "ours-on"`},
		{in: "java@", err: "java@: nothing after @"},
		{in: "java@latest", err: `"latest" is neither a version nor a path (write ./latest for a path)`},
		{in: "aiokafka@1.0;rm", err: "neither a version nor a path"},
	} {
		s, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q): %v, want an error with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if s.Version != c.version || s.Path != c.path || s.Client+"@"+s.Given != c.in {
			t.Errorf("Parse(%q) = %+v, want version %q, path %q", c.in, s, c.version, c.path)
		}
	}
}

func TestNameKeyBase(t *testing.T) {
	for _, c := range []struct {
		s               Spec
		name, key, base string
	}{
		{Spec{Client: "java", Version: "4.0.0"}, "java@4.0.0", "java-at-4.0.0", "java-4.4.0"},
		{Spec{Client: "kgo", Path: "/src/franz-go", Hash: "abcd12345678"}, "kgo@/src/franz-go#sha256:abcd12345678", "kgo-at-abcd12345678", "kgo"},
		{Spec{Client: "kafka-python", Version: "2.0.2"}, "kafka-python@2.0.2", "kafka-python-at-2.0.2", "kafka-python"},
		{Spec{Client: "librdkafka", Path: "/opt/l", Hash: "0123456789ab"}, "librdkafka@/opt/l#sha256:0123456789ab", "librdkafka-at-0123456789ab", "librdkafka"},
	} {
		if n, k, b := c.s.Name(), c.s.Key(), c.s.Base(); n != c.name || k != c.key || b != c.base {
			t.Errorf("%+v: name %q, key %q, base %q; want %q, %q, %q", c.s, n, k, b, c.name, c.key, c.base)
		}
	}
}

func write(t *testing.T, path, body string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), perm); err != nil {
		t.Fatal(err)
	}
}

func mustHash(t *testing.T, path string) string {
	t.Helper()
	h, err := Hash(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != HashLen {
		t.Fatalf("Hash(%s) = %q: want %d hex digits", path, h, HashLen)
	}
	return h
}

// TestHashDir: a directory's hash is the same for the same tree wherever
// it is, whatever order its files were written in; it changes with a
// file's content, name or executable bit, a new empty directory or a
// symbolic link's target, and not with .git.
func TestHashDir(t *testing.T) {
	tree := func(t *testing.T, reverse bool) string {
		d := t.TempDir()
		files := []struct{ p, body string }{{"go.mod", "module x\n"}, {"a/b.go", "package a\n"}, {"a/c/d.go", "package c\n"}, {"z.txt", "z"}}
		if reverse {
			for i, j := 0, len(files)-1; i < j; i, j = i+1, j-1 {
				files[i], files[j] = files[j], files[i]
			}
		}
		for _, f := range files {
			write(t, filepath.Join(d, f.p), f.body, 0o644)
		}
		if err := os.Symlink("a/b.go", filepath.Join(d, "link")); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := tree(t, false)
	h := mustHash(t, d)
	if again := mustHash(t, d); again != h {
		t.Fatalf("hash %s, then %s", h, again)
	}
	if other := mustHash(t, tree(t, true)); other != h {
		t.Errorf("the same tree elsewhere, written in another order: %s, want %s", other, h)
	}
	write(t, filepath.Join(d, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	write(t, filepath.Join(d, "a", ".git"), "gitdir: ../.git/worktrees/a\n", 0o644)
	if got := mustHash(t, d); got != h {
		t.Errorf("with .git: %s, want %s", got, h)
	}
	for _, c := range []struct {
		what   string
		change func(d string) error
	}{
		{"a file's content", func(d string) error { return os.WriteFile(filepath.Join(d, "a", "b.go"), []byte("package b\n"), 0o644) }},
		{"one byte appended", func(d string) error { return os.WriteFile(filepath.Join(d, "z.txt"), []byte("zz"), 0o644) }},
		{"a file renamed", func(d string) error { return os.Rename(filepath.Join(d, "z.txt"), filepath.Join(d, "y.txt")) }},
		{"a file moved to another directory", func(d string) error {
			return os.Rename(filepath.Join(d, "a", "c", "d.go"), filepath.Join(d, "a", "d.go"))
		}},
		{"a new file", func(d string) error { return os.WriteFile(filepath.Join(d, "new"), nil, 0o644) }},
		{"a file removed", func(d string) error { return os.Remove(filepath.Join(d, "z.txt")) }},
		{"an empty directory", func(d string) error { return os.Mkdir(filepath.Join(d, "empty"), 0o755) }},
		{"the executable bit", func(d string) error { return os.Chmod(filepath.Join(d, "go.mod"), 0o755) }},
		{"a link's target", func(d string) error {
			os.Remove(filepath.Join(d, "link"))
			return os.Symlink("a/c/d.go", filepath.Join(d, "link"))
		}},
	} {
		d := tree(t, false)
		if err := c.change(d); err != nil {
			t.Fatal(err)
		}
		if got := mustHash(t, d); got == h {
			t.Errorf("%s: the hash did not change (%s)", c.what, got)
		}
	}
}

// TestHashFile: a file's hash is its sha256's first digits, as sha256sum
// and drivers/java/build.sh --jar name it.
func TestHashFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.jar")
	write(t, p, "abc", 0o644)
	// sha256("abc")
	if got := mustHash(t, p); got != "ba7816bf8f01" {
		t.Errorf("Hash = %s, want ba7816bf8f01", got)
	}
	if _, err := Hash(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("Hash of nothing: no error")
	}
}

func TestResolve(t *testing.T) {
	d := t.TempDir()
	jar := filepath.Join(d, "k.jar")
	write(t, jar, "not really a jar", 0o644)
	fg := filepath.Join(d, "franz-go")
	write(t, filepath.Join(fg, "go.mod"), "module github.com/twmb/franz-go // the root\n\ngo 1.26\n", 0o644)
	write(t, filepath.Join(d, "other", "go.mod"), "module example.com/other\n", 0o644)
	t.Chdir(d)
	s, err := mustParse(t, "kgo@./franz-go").Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if want := "kgo@" + fg + "#sha256:" + mustHash(t, fg); s.Name() != want {
		t.Errorf("Name %q, want %q", s.Name(), want)
	}
	s, err = mustParse(t, "java@k.jar").Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if s.Path != jar || s.Hash != mustHash(t, jar) {
		t.Errorf("java@k.jar: %+v", s)
	}
	if s, err := mustParse(t, "java@4.0.0").Resolve(); err != nil || s.Name() != "java@4.0.0" {
		t.Errorf("a version: %+v, %v", s, err)
	}
	for in, want := range map[string]string{
		"java@nope.jar":          "java@nope.jar: " + filepath.Join(d, "nope.jar") + ": no such file or directory",
		"java@./franz-go":        "is not a file",
		"kgo@k.jar":              "is not a directory",
		"kgo@./other":            "is module example.com/other, not github.com/twmb/franz-go",
		"sarama@.":               "no go.mod in " + d,
		"sarama@./franz-go":      "is module github.com/twmb/franz-go, not github.com/IBM/sarama",
		"aiokafka@./no/such/dir": "no such file or directory",
	} {
		if _, err := mustParse(t, in).Resolve(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", in, err, want)
		}
	}
}

func mustParse(t *testing.T, s string) Spec {
	t.Helper()
	sp, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestNestedModules(t *testing.T) {
	d := t.TempDir()
	write(t, filepath.Join(d, "go.mod"), "module github.com/twmb/franz-go\n", 0o644)
	write(t, filepath.Join(d, "pkg", "kmsg", "go.mod"), "module github.com/twmb/franz-go/pkg/kmsg\n", 0o644)
	write(t, filepath.Join(d, "pkg", "kgo", "x.go"), "package kgo\n", 0o644)
	write(t, filepath.Join(d, "examples", "x", "go.mod"), "module example.com/x\n", 0o644)
	write(t, filepath.Join(d, "pkg", "testdata", "go.mod"), "module github.com/twmb/franz-go/pkg/testdata\n", 0o644)
	ms, err := nestedModules(d, "github.com/twmb/franz-go")
	if err != nil {
		t.Fatal(err)
	}
	want := []module{{"github.com/twmb/franz-go", d}, {"github.com/twmb/franz-go/pkg/kmsg", filepath.Join(d, "pkg", "kmsg")}}
	if len(ms) != len(want) || ms[0] != want[0] || ms[1] != want[1] {
		t.Errorf("nestedModules = %v, want %v", ms, want)
	}
}

func TestLastLines(t *testing.T) {
	if got := lastLines("a\n\nb\nc\n\n", 2); got != "  | b\n  | c" {
		t.Errorf("lastLines = %q", got)
	}
}
