package recordbatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codec is a record batch compression codec. Its value is the codec's
// number in the low three bits of a record batch's attributes.
type Codec int8

// The codecs Kafka defines.
const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

// codecNames holds each codec's name, indexed by its value; the names are
// those of Kafka's compression.type setting.
var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// maxDecompressed bounds what Decompress produces from one input, so that a
// corrupt or hostile batch cannot make it allocate without limit.
const maxDecompressed = 256 << 20

// ParseCodec returns the codec with the given name, one of "none", "gzip",
// "snappy", "lz4" and "zstd".
func ParseCodec(name string) (Codec, error) {
	for i, n := range codecNames {
		if n == name {
			return Codec(i), nil
		}
	}
	return 0, fmt.Errorf("unknown compression codec %q (valid: %s)", name, strings.Join(codecNames[:], ", "))
}

// String returns the codec's name, or "Codec(n)" for an unknown codec.
func (c Codec) String() string {
	if c.Valid() {
		return codecNames[c]
	}
	return fmt.Sprintf("Codec(%d)", int8(c))
}

// MarshalText implements encoding.TextMarshaler with the codec's name.
func (c Codec) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("marshal %v: unknown compression codec", c)
	}
	return []byte(codecNames[c]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, as ParseCodec does.
func (c *Codec) UnmarshalText(text []byte) error {
	v, err := ParseCodec(string(text))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Valid reports whether c is one of the codecs Kafka defines.
func (c Codec) Valid() bool { return c >= CodecNone && c <= CodecZstd }

// Compress appends src, compressed as Kafka expects a record batch's
// records to be for codec c, to dst and returns the extended slice.
// CodecNone appends src as it is.
//
// Snappy output is framed the way the Java producer's SnappyOutputStream
// frames it (xerial framing), and lz4 output is an LZ4 frame laid out as the
// Java producer's Lz4BlockOutputStream lays it out (independent 64 KiB
// blocks, no checksums).
func (c Codec) Compress(dst, src []byte) ([]byte, error) {
	switch c {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		return compressGzip(dst, src)
	case CodecSnappy:
		return appendXerial(dst, src), nil
	case CodecLZ4:
		return compressLZ4(dst, src)
	case CodecZstd:
		enc, err := zstdEncoder()
		if err != nil {
			return dst, fmt.Errorf("compress zstd: %w", err)
		}
		return enc.EncodeAll(src, dst), nil
	}
	return dst, fmt.Errorf("compress: unknown compression codec %v", c)
}

// Decompress appends src, compressed with codec c, decompressed to dst and
// returns the extended slice. Snappy input may be xerial framed or a bare
// snappy block, as the Java consumer allows.
func (c Codec) Decompress(dst, src []byte) ([]byte, error) {
	var (
		out []byte
		err error
	)
	switch c {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		out, err = decompressGzip(dst, src)
	case CodecSnappy:
		out, err = decompressSnappy(dst, src)
	case CodecLZ4:
		out, err = decompressLZ4(dst, src)
	case CodecZstd:
		var dec *zstd.Decoder
		if dec, err = zstdDecoder(); err == nil {
			out, err = dec.DecodeAll(src, dst)
		}
	default:
		return dst, fmt.Errorf("decompress: unknown compression codec %v", c)
	}
	if err != nil {
		return dst, fmt.Errorf("decompress %v: %w", c, err)
	}
	return out, nil
}

// appendWriter is an io.Writer that appends to a byte slice, so that stream
// encoders can write straight into the caller's dst.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// readAppend appends everything r yields to dst, failing if that would be
// more than maxDecompressed bytes.
func readAppend(dst []byte, r io.Reader) ([]byte, error) {
	start := len(dst)
	for {
		if len(dst)-start > maxDecompressed {
			return dst[:start], fmt.Errorf("output exceeds %d bytes", maxDecompressed)
		}
		dst = slices.Grow(dst, 32<<10)
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst[:start], err
		}
	}
}

// gzipWriter pairs a pooled gzip writer with the sink it writes to.
type gzipWriter struct {
	w    *gzip.Writer
	sink appendWriter
}

var gzipWriters = sync.Pool{New: func() any {
	gw := new(gzipWriter)
	gw.w = gzip.NewWriter(&gw.sink)
	return gw
}}

func compressGzip(dst, src []byte) ([]byte, error) {
	gw := gzipWriters.Get().(*gzipWriter)
	defer func() {
		gw.sink.b = nil
		gzipWriters.Put(gw)
	}()
	gw.sink.b = dst
	gw.w.Reset(&gw.sink)
	if _, err := gw.w.Write(src); err != nil {
		return dst, fmt.Errorf("compress gzip: %w", err)
	}
	if err := gw.w.Close(); err != nil {
		return dst, fmt.Errorf("compress gzip: %w", err)
	}
	return gw.sink.b, nil
}

// gzipReader pairs a pooled gzip reader with the source it reads.
type gzipReader struct {
	r   gzip.Reader
	src bytes.Reader
}

var gzipReaders = sync.Pool{New: func() any { return new(gzipReader) }}

func decompressGzip(dst, src []byte) ([]byte, error) {
	gr := gzipReaders.Get().(*gzipReader)
	defer gzipReaders.Put(gr)
	gr.src.Reset(src)
	if err := gr.r.Reset(&gr.src); err != nil {
		return dst, err
	}
	out, err := readAppend(dst, &gr.r)
	gr.src.Reset(nil)
	return out, err
}

// lz4Writer pairs a pooled lz4 frame writer with the sink it writes to.
type lz4Writer struct {
	w    *lz4.Writer
	sink appendWriter
}

// lz4Writers hands out writers set up as the Java producer's
// Lz4BlockOutputStream: FLG 0x60 (version 1, independent blocks, no
// block or content checksum, no content size) and BD 0x40 (64 KiB blocks).
var lz4Writers = sync.Pool{New: func() any {
	lw := new(lz4Writer)
	lw.w = lz4.NewWriter(&lw.sink)
	if err := lw.w.Apply(
		lz4.BlockSizeOption(lz4.Block64Kb),
		lz4.ChecksumOption(false),
		lz4.BlockChecksumOption(false),
		lz4.CompressionLevelOption(lz4.Fast),
	); err != nil {
		// The options are constants that lz4 accepts; failing here is
		// a programming error, not a run time condition.
		panic(fmt.Sprintf("producer: lz4 writer options: %v", err))
	}
	return lw
}}

func compressLZ4(dst, src []byte) ([]byte, error) {
	lw := lz4Writers.Get().(*lz4Writer)
	defer func() {
		lw.w.Reset(nil)
		lw.sink.b = nil
		lz4Writers.Put(lw)
	}()
	lw.sink.b = dst
	lw.w.Reset(&lw.sink)
	if _, err := lw.w.Write(src); err != nil {
		return dst, fmt.Errorf("compress lz4: %w", err)
	}
	if err := lw.w.Close(); err != nil {
		return dst, fmt.Errorf("compress lz4: %w", err)
	}
	return lw.sink.b, nil
}

// lz4Reader pairs a pooled lz4 frame reader with the source it reads.
type lz4Reader struct {
	r   *lz4.Reader
	src bytes.Reader
}

var lz4Readers = sync.Pool{New: func() any { return &lz4Reader{r: lz4.NewReader(nil)} }}

func decompressLZ4(dst, src []byte) ([]byte, error) {
	lr := lz4Readers.Get().(*lz4Reader)
	defer func() {
		lr.r.Reset(nil)
		lr.src.Reset(nil)
		lz4Readers.Put(lr)
	}()
	lr.src.Reset(src)
	lr.r.Reset(&lr.src)
	return readAppend(dst, lr.r)
}

// The zstd encoder and decoder are safe for concurrent EncodeAll and
// DecodeAll calls and pool their own per-call state, so one of each serves
// every caller. They start no goroutines as they are used only this way.
var (
	zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithZeroFrames(true),
			// Batches are at most a few MiB; a 1 MiB window loses
			// little ratio and bounds what readers must allocate.
			zstd.WithWindowSize(1<<20),
		)
	})
	zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxDecompressed))
	})
)

// Xerial framing, as the Java client's snappy-java SnappyOutputStream
// writes it: an 8 byte magic, a big endian version and minimum compatible
// version (both 1), then blocks of a big endian int32 length followed by one
// raw snappy block of at most xerialBlockSize input bytes.
var xerialHeader = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}

// xerialBlockSize is SnappyOutputStream's default block size, which Kafka's
// snappy codec uses.
const xerialBlockSize = 32 << 10

func appendXerial(dst, src []byte) []byte {
	dst = append(dst, xerialHeader...)
	for len(src) > 0 {
		n := min(len(src), xerialBlockSize)
		at := len(dst)
		dst = slices.Grow(dst, 4+s2.MaxEncodedLen(n))
		// EncodeSnappy writes from the start of the slice it is given
		// when that slice has the capacity, as it does here.
		block := s2.EncodeSnappy(dst[at+4:cap(dst)], src[:n])
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(block)))
		dst = dst[:at+4+len(block)]
		src = src[n:]
	}
	return dst
}

var errXerial = errors.New("malformed xerial snappy framing")

func decompressSnappy(dst, src []byte) ([]byte, error) {
	// The 8 byte magic alone identifies xerial framing, as it does for
	// SnappyInputStream: no valid raw snappy block starts with it, since
	// its third byte would make the block's first element a copy.
	if !bytes.HasPrefix(src, xerialHeader[:8]) {
		return appendSnappyBlock(dst, src)
	}
	if len(src) < len(xerialHeader) {
		return dst, errXerial
	}
	start := len(dst)
	for src = src[len(xerialHeader):]; len(src) > 0; {
		if len(src) < 4 {
			return dst[:start], errXerial
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return dst[:start], errXerial
		}
		var err error
		if dst, err = appendSnappyBlock(dst, src[:n]); err != nil {
			return dst[:start], err
		}
		if len(dst)-start > maxDecompressed {
			return dst[:start], fmt.Errorf("output exceeds %d bytes", maxDecompressed)
		}
		src = src[n:]
	}
	return dst, nil
}

// appendSnappyBlock appends the decoding of one raw snappy block to dst.
func appendSnappyBlock(dst, block []byte) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return dst, err
	}
	if n > maxDecompressed {
		return dst, fmt.Errorf("snappy block claims %d bytes, more than %d", n, maxDecompressed)
	}
	at := len(dst)
	dst = slices.Grow(dst, n)
	if _, err := s2.Decode(dst[at:at+n], block); err != nil {
		return dst[:at], err
	}
	return dst[:at+n], nil
}
