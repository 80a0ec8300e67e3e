//go:build !js

package web

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/stretchr/testify/require"
	qrcode "github.com/yeqown/go-qrcode/v2"
)

// The PNG is a valid image of the expected size whose every module is
// the library's matrix, with a light quiet zone around it.
func TestQRPNG(t *testing.T) {
	for _, text := range []string{"https://lab.example:8443/join/abcdefghijklmnopqrstuvwx", "x"} {
		b, dim, err := qrPNG(text)
		require.NoError(t, err)
		img, err := png.Decode(bytes.NewReader(b))
		require.NoError(t, err)
		side := (dim + 2*qrQuiet) * qrScale
		require.Equal(t, side, img.Bounds().Dx())
		require.Equal(t, side, img.Bounds().Dy())
		q, err := qrcode.NewWith(text, qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionMedium))
		require.NoError(t, err)
		var bits [][]bool
		require.NoError(t, q.Save(bitsWriter(func(m qrcode.Matrix) { bits = m.Bitmap() })))
		require.Len(t, bits, dim)
		dark := func(px, py int) bool {
			r, _, _, _ := img.At(px, py).RGBA()
			return r < 0x8000
		}
		for my := -qrQuiet; my < dim+qrQuiet; my++ {
			for mx := -qrQuiet; mx < dim+qrQuiet; mx++ {
				want := mx >= 0 && my >= 0 && mx < dim && my < dim && bits[my][mx]
				px, py := (mx+qrQuiet)*qrScale, (my+qrQuiet)*qrScale
				require.Equal(t, want, dark(px, py), "module %d,%d", mx, my)
				require.Equal(t, want, dark(px+qrScale-1, py+qrScale-1), "module %d,%d", mx, my)
			}
		}
	}
}

type bitsWriter func(qrcode.Matrix)

func (w bitsWriter) Write(m qrcode.Matrix) error { w(m); return nil }
func (w bitsWriter) Close() error                { return nil }
