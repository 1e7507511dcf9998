package builds

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Spec is a client named with a build, NAME@SPEC: a version its registry
// serves, or a local path.
type Spec struct {
	Client string // the name before @: one of Clients
	Given  string // what followed @, as given
	// Exactly one of Version and Path is set. Path is absolute and Hash is
	// its content's (Hash) once Resolve has run.
	Version string
	Path    string
	Hash    string
}

// kind is what a client takes after @ and how it is built.
type kind struct {
	name string
	// base is the stock client (matrix.Clients) whose rules, and so family,
	// a build has.
	base string
	// registry, if a version is taken: who serves it.
	registry string
	// path: what a local path must be: "file" (a jar), "dir", or "any".
	path string
	// module: for a Go client, the module path DIR must be.
	module string
	// doc says what NAME@SPEC takes, for errors and help.
	doc string
}

var kinds = []kind{
	{name: "java", base: "java-4.4.0", registry: "Maven Central", path: "file", doc: "java@VERSION (org.apache.kafka:kafka-clients on Maven Central) or java@PATH (a kafka-clients jar)"},
	{name: "kgo", base: "kgo", path: "dir", module: "github.com/twmb/franz-go", doc: "kgo@DIR (a franz-go checkout)"},
	{name: "sarama", base: "sarama", path: "dir", module: "github.com/IBM/sarama", doc: "sarama@DIR (a sarama checkout)"},
	{name: "librdkafka", base: "librdkafka", registry: "PyPI", path: "dir", doc: "librdkafka@VERSION (confluent-kafka==VERSION from PyPI, whose wheel bundles librdkafka of that version) or librdkafka@DIR (a librdkafka build: src/ after make, or an install prefix)"},
	{name: "kafkajs", base: "kafkajs", registry: "npm", path: "any", doc: "kafkajs@VERSION (npm) or kafkajs@PATH (a kafkajs checkout or npm pack tarball)"},
	{name: "aiokafka", base: "aiokafka", registry: "PyPI", path: "any", doc: "aiokafka@VERSION (PyPI) or aiokafka@PATH (a source tree, sdist or wheel)"},
	{name: "kafka-python", base: "kafka-python", registry: "PyPI", path: "any", doc: "kafka-python@VERSION (PyPI) or kafka-python@PATH (a source tree, sdist or wheel)"},
}

// Clients lists the names a build can be made of, as NAME@SPEC takes them.
func Clients() []string {
	var ns []string
	for _, k := range kinds {
		ns = append(ns, k.name)
	}
	return ns
}

func kindOf(name string) (kind, bool) {
	for _, k := range kinds {
		if k.name == name {
			return k, true
		}
	}
	return kind{}, false
}

// version is what a registry's version looks like: Maven's, PyPI's and npm's
// (4.0.0, 0.14.0rc1, 2.2.4-beta.1); nothing a shell or a path would read.
var version = regexp.MustCompile(`^[0-9][0-9A-Za-z._+-]*$`)

// IsBuild reports whether a client name names a build (NAME@SPEC).
func IsBuild(s string) bool { return strings.Contains(s, "@") }

// Parse reads NAME@SPEC. SPEC is a path if it has a / in it, starts with . or
// ~, or names a file by its extension (.jar, .tgz, .tar.gz, .whl, .zip), or
// if the client takes only paths; otherwise a version. Parse does no I/O:
// Resolve checks and hashes the path.
func Parse(s string) (Spec, error) {
	name, given, ok := strings.Cut(s, "@")
	if !ok {
		return Spec{}, fmt.Errorf("%q: not NAME@VERSION or NAME@PATH", s)
	}
	k, ok := kindOf(name)
	if !ok {
		return Spec{}, fmt.Errorf("%s: unknown client %q (a build can be made of: %s)", s, name, strings.Join(Clients(), ", "))
	}
	if given == "" {
		return Spec{}, fmt.Errorf("%s: nothing after @: %s", s, k.doc)
	}
	sp := Spec{Client: name, Given: given}
	if k.registry == "" || looksLikePath(given) {
		sp.Path = given
		return sp, nil
	}
	if !version.MatchString(given) {
		return Spec{}, fmt.Errorf("%s: %q is neither a version nor a path (write ./%s for a path): %s", s, given, given, k.doc)
	}
	sp.Version = given
	return sp, nil
}

func looksLikePath(s string) bool {
	if strings.ContainsRune(s, '/') || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "~") {
		return true
	}
	for _, ext := range []string{".jar", ".tgz", ".tar.gz", ".whl", ".zip"} {
		if strings.HasSuffix(s, ext) {
			return true
		}
	}
	return false
}

// Resolve makes a path absolute (~/ is the home directory), checks that it
// is what the client takes, and sets Hash. A version is left as it is: its
// registry is asked only by Build.
func (s Spec) Resolve() (Spec, error) {
	if s.Path == "" {
		return s, nil
	}
	k, _ := kindOf(s.Client)
	p := s.Path
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return s, fmt.Errorf("%s: %w", s.given(), err)
		}
		p = filepath.Join(home, rest)
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return s, fmt.Errorf("%s: %w", s.given(), err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return s, fmt.Errorf("%s: %s: no such file or directory", s.given(), p)
		}
		return s, fmt.Errorf("%s: %w", s.given(), err)
	}
	switch {
	case k.path == "file" && !fi.Mode().IsRegular():
		return s, fmt.Errorf("%s: %s is not a file: %s", s.given(), p, k.doc)
	case k.path == "dir" && !fi.IsDir():
		return s, fmt.Errorf("%s: %s is not a directory: %s", s.given(), p, k.doc)
	}
	if k.module != "" {
		m, err := modulePath(filepath.Join(p, "go.mod"))
		if err != nil {
			return s, fmt.Errorf("%s: %w: %s", s.given(), err, k.doc)
		}
		if m != k.module {
			return s, fmt.Errorf("%s: %s is module %s, not %s, which the %s driver imports", s.given(), p, m, k.module, k.name)
		}
	}
	h, err := Hash(p)
	if err != nil {
		return s, fmt.Errorf("%s: hashing %s: %w", s.given(), p, err)
	}
	s.Path, s.Hash = p, h
	return s, nil
}

// given is NAME@SPEC as given.
func (s Spec) given() string { return s.Client + "@" + s.Given }

// Name names the build exactly: NAME@VERSION, or NAME@PATH#sha256:HASH with
// PATH absolute and HASH the first 12 hex digits of its content hash.
func (s Spec) Name() string {
	if s.Path != "" {
		return s.Client + "@" + s.Path + "#sha256:" + s.Hash
	}
	return s.Client + "@" + s.Version
}

// Key is the build's name in the cache and in file and topic names:
// NAME-at-VERSION or NAME-at-HASH.
func (s Spec) Key() string {
	if s.Path != "" {
		return s.Client + "-at-" + s.Hash
	}
	return s.Client + "-at-" + s.Version
}

// Base is the stock client whose family the build is in.
func (s Spec) Base() string {
	k, _ := kindOf(s.Client)
	return k.base
}

// modulePath reads the module path of the go.mod at path.
func modulePath(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("no go.mod in %s", filepath.Dir(path))
		}
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		l, _, _ = strings.Cut(l, "//")
		f := strings.Fields(l)
		if len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], "\"`"), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", path)
}
