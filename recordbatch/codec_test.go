package recordbatch_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/recordbatch"
)

var allCodecs = []recordbatch.Codec{
	recordbatch.CodecNone, recordbatch.CodecGzip, recordbatch.CodecSnappy, recordbatch.CodecLZ4, recordbatch.CodecZstd,
}

func TestParseCodec(t *testing.T) {
	for i, name := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		c, err := recordbatch.ParseCodec(name)
		if err != nil || c != recordbatch.Codec(i) {
			t.Errorf("ParseCodec(%q) = %v, %v; want %d", name, c, err, i)
		}
		if c.String() != name {
			t.Errorf("Codec(%d).String() = %q, want %q", i, c.String(), name)
		}
		text, err := c.MarshalText()
		if err != nil || string(text) != name {
			t.Errorf("Codec(%d).MarshalText() = %q, %v", i, text, err)
		}
		var u recordbatch.Codec
		if err := u.UnmarshalText([]byte(name)); err != nil || u != c {
			t.Errorf("UnmarshalText(%q) = %v, %v", name, u, err)
		}
	}
	for _, bad := range []string{"", "GZIP", "lz4 ", "brotli"} {
		_, err := recordbatch.ParseCodec(bad)
		if err == nil {
			t.Errorf("ParseCodec(%q) succeeded", bad)
			continue
		}
		for _, name := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("ParseCodec(%q) error %q does not name %q", bad, err, name)
			}
		}
	}
	if s := recordbatch.Codec(5).String(); s != "Codec(5)" {
		t.Errorf("Codec(5).String() = %q", s)
	}
	if _, err := recordbatch.Codec(-1).Compress(nil, []byte("x")); err == nil {
		t.Error("Codec(-1).Compress succeeded")
	}
	if _, err := recordbatch.Codec(7).Decompress(nil, []byte("x")); err == nil {
		t.Error("Codec(7).Decompress succeeded")
	}
}

// codecTestInputs returns inputs of the sizes and kinds that matter: empty,
// tiny, compressible, incompressible, and larger than an lz4 block (64 KiB)
// and a snappy xerial block (32 KiB).
func codecTestInputs(t *testing.T) map[string][]byte {
	rng := testRand(t)
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	text := []byte(strings.Repeat("kcheck-id=0123 value=abcdefgh; ", 10000))
	mixed := append(append(random(70000), text[:100000]...), random(5000)...)
	return map[string][]byte{
		"empty":          {},
		"one":            {'x'},
		"short":          []byte("hello, kafka"),
		"text-300k":      text,
		"random-1k":      random(1000),
		"random-200k":    random(200000),
		"mixed":          mixed,
		"exact-32k":      random(32 << 10),
		"exact-64k-text": text[:64<<10],
	}
}

func TestCodecRoundTrip(t *testing.T) {
	inputs := codecTestInputs(t)
	kdec := kgo.DefaultDecompressor()
	for _, c := range allCodecs {
		for name, in := range inputs {
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				prefix := []byte("prefix")
				out, err := c.Compress(append([]byte(nil), prefix...), in)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(out, prefix) {
					t.Fatalf("Compress did not keep dst's contents")
				}
				compressed := out[len(prefix):]
				back, err := c.Decompress([]byte("pre"), compressed)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(back, []byte("pre")) || !bytes.Equal(back[3:], in) {
					t.Fatalf("round trip changed %d bytes into %d", len(in), len(back)-3)
				}
				// franz-go's consumer must read what we write. A
				// batch never has empty records, and kgo reads a
				// bare xerial header as a (corrupt) raw block.
				if c != recordbatch.CodecNone && len(in) > 0 {
					got, err := kdec.Decompress(compressed, kgo.CompressionCodecType(c))
					if err != nil {
						t.Fatalf("kgo decompress: %v", err)
					}
					if !bytes.Equal(got, in) {
						t.Fatalf("kgo decompressed %d bytes into %d", len(in), len(got))
					}
				}
			})
		}
	}
}

// TestCodecReadsKgo checks that Decompress reads franz-go's compressor's
// output for each codec.
func TestCodecReadsKgo(t *testing.T) {
	inputs := codecTestInputs(t)
	for _, kc := range []kgo.CompressionCodec{kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		comp, err := kgo.DefaultCompressor(kc)
		if err != nil {
			t.Fatal(err)
		}
		for name, in := range inputs {
			if len(in) == 0 {
				continue
			}
			var buf bytes.Buffer
			out, used := comp.Compress(&buf, in)
			c := recordbatch.Codec(used)
			got, err := c.Decompress(nil, out)
			if err != nil {
				t.Fatalf("%v %s: %v", c, name, err)
			}
			if !bytes.Equal(got, in) {
				t.Fatalf("%v %s: decompressed %d bytes into %d", c, name, len(in), len(got))
			}
		}
	}
}

// TestSnappyXerialFraming checks the layout that snappy-java's
// SnappyInputStream expects, as the Java producer writes it.
func TestSnappyXerialFraming(t *testing.T) {
	in := bytes.Repeat([]byte("0123456789abcdef"), 5000) // 80000 bytes: 3 blocks
	out, err := recordbatch.CodecSnappy.Compress(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	header := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}
	if !bytes.HasPrefix(out, header) {
		t.Fatalf("header % x, want % x", out[:min(16, len(out))], header)
	}
	var blocks [][]byte
	for rest := out[16:]; len(rest) > 0; {
		n := binary.BigEndian.Uint32(rest)
		blocks = append(blocks, rest[4:4+n])
		rest = rest[4+n:]
	}
	if len(blocks) != 3 {
		t.Fatalf("%d blocks, want 3 of at most 32 KiB input", len(blocks))
	}
	var joined []byte
	for i, b := range blocks {
		dec, err := s2.Decode(nil, b)
		if err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		if want := min(32<<10, len(in)-len(joined)); len(dec) != want {
			t.Fatalf("block %d holds %d bytes, want %d", i, len(dec), want)
		}
		joined = append(joined, dec...)
	}
	if !bytes.Equal(joined, in) {
		t.Fatal("blocks do not join to the input")
	}

	// A bare snappy block, which SnappyInputStream also reads.
	raw := s2.EncodeSnappy(nil, in)
	got, err := recordbatch.CodecSnappy.Decompress(nil, raw)
	if err != nil || !bytes.Equal(got, in) {
		t.Fatalf("decompress bare snappy block: %v", err)
	}

	for _, bad := range [][]byte{header[:12], append(append([]byte{}, header...), 0, 0, 0, 9, 1)} {
		if _, err := recordbatch.CodecSnappy.Decompress(nil, bad); err == nil {
			t.Errorf("Decompress(% x) succeeded", bad)
		}
	}
}

// TestLZ4FrameHeader checks the frame descriptor against the one the Java
// producer's Lz4BlockOutputStream writes (see testdata/java-lz4.batch).
func TestLZ4FrameHeader(t *testing.T) {
	out, err := recordbatch.CodecLZ4.Compress(nil, []byte("hello, kafka"))
	if err != nil {
		t.Fatal(err)
	}
	// Magic 0x184D2204 little endian; FLG 0x60: version 1, independent
	// blocks, no checksums, no content size; BD 0x40: 64 KiB blocks; HC.
	want := []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82}
	if !bytes.HasPrefix(out, want) {
		t.Fatalf("frame starts % x, want % x", out[:min(len(out), 7)], want)
	}
	if end := out[len(out)-4:]; !bytes.Equal(end, []byte{0, 0, 0, 0}) {
		t.Fatalf("frame ends % x, want the end mark and no content checksum", end)
	}
}

func TestDecompressCorrupt(t *testing.T) {
	in := bytes.Repeat([]byte("kcheck "), 1000)
	for _, c := range allCodecs[1:] {
		out, err := c.Compress(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range [][]byte{out[:len(out)/2], {1, 2, 3}} {
			got, err := c.Decompress(nil, bad)
			if err == nil && bytes.Equal(got, in) {
				t.Errorf("%v: Decompress of %d corrupt bytes gave the input back", c, len(bad))
			}
			if err != nil && !strings.Contains(err.Error(), c.String()) {
				t.Errorf("%v: error %q does not name the codec", c, err)
			}
		}
	}
}

// TestCodecConcurrent shares the pooled encoders and decoders among
// goroutines; run it with -race.
func TestCodecConcurrent(t *testing.T) {
	inputs := codecTestInputs(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				c := allCodecs[(g+i)%len(allCodecs)]
				for name, in := range inputs {
					out, err := c.Compress(nil, in)
					if err != nil {
						t.Errorf("%v %s: %v", c, name, err)
						return
					}
					back, err := c.Decompress(nil, out)
					if err != nil || !bytes.Equal(back, in) {
						t.Errorf("%v %s: round trip failed: %v", c, name, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// codecTestRace reports whether the test binary runs under the race
// detector, which makes sync.Pool drop items at random.
func codecTestRace() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

func TestCompressAllocations(t *testing.T) {
	if codecTestRace() {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	in := bytes.Repeat([]byte("kcheck-id=0123 value=abcdefgh; "), 2000)
	for _, c := range allCodecs {
		dst := make([]byte, 0, 2*len(in)+1024)
		if _, err := c.Compress(dst, in); err != nil { // warm the pools
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := c.Compress(dst[:0], in); err != nil {
				t.Fatal(err)
			}
		})
		// sync.Pool may drop an encoder at a GC; a new encoder
		// allocates much more than this.
		if allocs > 2 {
			t.Errorf("%v: %.1f allocations per Compress, want pooled encoders", c, allocs)
		}
	}
}

func BenchmarkCompress(b *testing.B) {
	in := []byte(strings.Repeat("kcheck-id=0123 value=abcdefgh; ", 1<<15/31))
	for _, c := range allCodecs {
		b.Run(fmt.Sprint(c), func(b *testing.B) {
			dst := make([]byte, 0, 2*len(in))
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Compress(dst[:0], in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecompress(b *testing.B) {
	in := []byte(strings.Repeat("kcheck-id=0123 value=abcdefgh; ", 1<<15/31))
	for _, c := range allCodecs {
		b.Run(fmt.Sprint(c), func(b *testing.B) {
			comp, err := c.Compress(nil, in)
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]byte, 0, len(in))
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Decompress(dst[:0], comp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
