package builds

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// confluentKafka is the confluent-kafka the librdkafka driver runs
// (drivers/python/requirements.txt), built from its sdist against a local
// librdkafka of its version or later; minVersion is the librdkafka it
// requires (its confluent_kafka.h).
const (
	confluentKafka = "confluent-kafka==2.16.1"
	minVersion     = 0x02100000 // 2.16.0
)

// confluentKafkaFor is the confluent-kafka to build against librdkafka
// version v (rdkafka.h's RD_KAFKA_VERSION, 0xMMmmrrpp): the driver's own if
// v is minVersion or later, otherwise the newest release of v's
// major.minor (confluent-kafka~=MM.mm.0), which requires no later
// librdkafka: Confluent releases the two in step.
func confluentKafkaFor(v uint32) string {
	if v >= minVersion {
		return confluentKafka
	}
	return fmt.Sprintf("confluent-kafka~=%d.%d.0", v>>24, (v>>16)&0xff)
}

// rdkafkaVersion reads RD_KAFKA_VERSION from the rdkafka.h at path.
func rdkafkaVersion(path string) (uint32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == "#define" && f[1] == "RD_KAFKA_VERSION" {
			v, err := strconv.ParseUint(f[2], 0, 32)
			if err != nil {
				return 0, fmt.Errorf("%s: RD_KAFKA_VERSION %s: %w", path, f[2], err)
			}
			return uint32(v), nil
		}
	}
	return 0, fmt.Errorf("%s: no #define RD_KAFKA_VERSION", path)
}

// librdkafkaLayout finds the headers and the shared library of the
// librdkafka build at dir: a source tree after ./configure && make
// (src/rdkafka.h, src/librdkafka.so*), or an install prefix
// (include/librdkafka/rdkafka.h, lib/librdkafka.so*).
func librdkafkaLayout(dir string) (headers []string, libs []string, err error) {
	for _, l := range []struct{ inc, lib string }{
		{filepath.Join(dir, "src"), filepath.Join(dir, "src")},
		{filepath.Join(dir, "include", "librdkafka"), filepath.Join(dir, "lib")},
	} {
		if _, err := os.Stat(filepath.Join(l.inc, "rdkafka.h")); err != nil {
			continue
		}
		headers, _ = filepath.Glob(filepath.Join(l.inc, "*.h"))
		libs, _ = filepath.Glob(filepath.Join(l.lib, "librdkafka.so*"))
		if len(libs) == 0 {
			return nil, nil, fmt.Errorf("%s has rdkafka.h but %s has no librdkafka.so: build it first (./configure && make)", dir, l.lib)
		}
		return headers, libs, nil
	}
	return nil, nil, fmt.Errorf("%s is neither a librdkafka build (src/rdkafka.h and src/librdkafka.so after ./configure && make) nor an install prefix (include/librdkafka/rdkafka.h and lib/librdkafka.so)", dir)
}

// buildLibrdkafka builds confluent-kafka (confluentKafkaFor the librdkafka's
// version) from source against the librdkafka at Path into a virtualenv of
// its own: the headers and shared library are
// copied into the build's directory (include/librdkafka, lib), so the
// build does not change when Path does, and pip builds confluent-kafka's
// sdist (--no-binary, --no-cache-dir: never a wheel built against another
// librdkafka) with CFLAGS and LDFLAGS pointing there, the library found at
// run time by its rpath.
func buildLibrdkafka(ctx context.Context, env Env, s Spec) ([]string, error) {
	headers, libs, err := librdkafkaLayout(s.Path)
	if err != nil {
		return nil, err
	}
	var version uint32
	for _, h := range headers {
		if filepath.Base(h) == "rdkafka.h" {
			if version, err = rdkafkaVersion(h); err != nil {
				return nil, err
			}
		}
	}
	req := confluentKafkaFor(version)
	v, done, unlock, err := openVenv(ctx, env, s, req+" --no-binary confluent-kafka")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !done {
		inc, lib := filepath.Join(v.dir, "include"), filepath.Join(v.dir, "lib")
		for _, d := range []string{inc, lib} {
			if err := os.RemoveAll(d); err != nil {
				return nil, err
			}
		}
		if err := os.MkdirAll(filepath.Join(inc, "librdkafka"), 0o755); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(lib, 0o755); err != nil {
			return nil, err
		}
		for _, h := range headers {
			if err := copyFile(h, filepath.Join(inc, "librdkafka", filepath.Base(h)), 0o644); err != nil {
				return nil, err
			}
		}
		for _, l := range libs {
			if err := copyPath(l, filepath.Join(lib, filepath.Base(l))); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(env.Log, "builds: building %s from source against librdkafka %d.%d.%d at %s into %s\n",
			req, version>>24, (version>>16)&0xff, (version>>8)&0xff, s.Path, v.dir)
		flags := []string{"CFLAGS=-I" + inc, "LDFLAGS=-L" + lib + " -Wl,-rpath," + lib}
		if err := v.pip(ctx, env, flags, req, "--no-binary", "confluent-kafka", "--no-cache-dir", req); err != nil {
			return nil, fmt.Errorf("%s (with %s): %w", req, strings.Join(flags, " "), err)
		}
		// The library it loads is the one given, by its version.
		cmd := exec.CommandContext(ctx, v.py, "-c", "import confluent_kafka; print(confluent_kafka.libversion()[1])")
		out, err := output(cmd, env.Log, "confluent_kafka.libversion()")
		if err != nil {
			return nil, fmt.Errorf("built, but does not import: %w", err)
		}
		if got, err := strconv.ParseUint(out, 10, 32); err != nil || uint32(got) != version {
			return nil, fmt.Errorf("built, but confluent_kafka loads librdkafka %s (0x%x), not %s's 0x%x", out, got, s.Path, version)
		}
		if err := v.done(ctx, env, "confluent_kafka"); err != nil {
			return nil, err
		}
	}
	return []string{v.py, filepath.Join(env.Root, "drivers", "python", "driver.py")}, nil
}

// copyPath copies a file, or a symbolic link as a link (librdkafka.so ->
// librdkafka.so.1).
func copyPath(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		t, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(t, dst)
	}
	return copyFile(src, dst, fi.Mode().Perm())
}
