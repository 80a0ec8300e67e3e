//go:build !js

package web

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"

	qrcode "github.com/yeqown/go-qrcode/v2"
)

// QR code rendering: the matrix comes from github.com/yeqown/go-qrcode/v2's
// core module (its writers pull in image libraries we do not need); the
// PNG is ours: a two-colour paletted image, encoded by image/png.
const (
	qrScale = 8 // pixels per module
	qrQuiet = 4 // modules of quiet zone on each side (ISO/IEC 18004)
)

// qrPNG returns the PNG of text's QR code (error correction level M),
// qrScale pixels a module with a quiet zone of qrQuiet modules, and the
// code's dimension in modules.
func qrPNG(text string) ([]byte, int, error) {
	q, err := qrcode.NewWith(text, qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionMedium))
	if err != nil {
		return nil, 0, fmt.Errorf("web: QR code: %w", err)
	}
	w := &pngWriter{}
	if err := q.Save(w); err != nil {
		return nil, 0, fmt.Errorf("web: QR code: %w", err)
	}
	return w.buf.Bytes(), w.dim, nil
}

// pngWriter is a qrcode.Writer that draws the matrix as a PNG.
type pngWriter struct {
	buf bytes.Buffer
	dim int
}

var _ qrcode.Writer = (*pngWriter)(nil)

// Write implements qrcode.Writer.
func (p *pngWriter) Write(mat qrcode.Matrix) error {
	bits := mat.Bitmap() // bits[y][x], true for a dark module
	p.dim = len(bits)
	side := (p.dim + 2*qrQuiet) * qrScale
	img := image.NewPaletted(image.Rect(0, 0, side, side), color.Palette{color.White, color.Black})
	for y, row := range bits {
		for x, dark := range row {
			if !dark {
				continue
			}
			x0, y0 := (x+qrQuiet)*qrScale, (y+qrQuiet)*qrScale
			for dy := range qrScale {
				off := img.PixOffset(x0, y0+dy)
				for dx := range qrScale {
					img.Pix[off+dx] = 1
				}
			}
		}
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	return enc.Encode(&p.buf, img)
}

// Close implements qrcode.Writer.
func (p *pngWriter) Close() error { return nil }
