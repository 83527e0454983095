internal import NearcardImage

/// Drawing a QR matrix for a terminal, as SVG, or as PNG (libpng's simplified API).
extension QRMatrix {
    /// The quiet zone around a code, in modules (ISO/IEC 18004 asks for 4).
    public static let quietZone = 4

    /// How a code is drawn with text: how many modules a character holds across and down.
    public enum Glyphs: String, Sendable, CaseIterable {
        /// One module across, two down (▀ ▄ █): in every terminal font; modules nearly square.
        case halfBlocks = "half"
        /// Two across, three down (Unicode 13's block sextants, U+1FB00…): a code of three times the
        /// modules fits a window (80×24 draws a version-10 code), in fonts and terminals that have them
        /// (GNOME Terminal, Konsole, kitty, foot, WezTerm, xterm); modules a third taller than wide, which
        /// scanners read as they read a code seen at an angle.
        case sextants = "sextant"

        public var across: Int { self == .halfBlocks ? 1 : 2 }
        public var down: Int { self == .halfBlocks ? 2 : 3 }

        /// The largest code side (modules, without the quiet zone) `columns`×`lines` characters hold.
        public func side(columns: Int, lines: Int) -> Int {
            min(columns * across, lines * down) - 2 * QRMatrix.quietZone
        }

        /// The characters a code of `side` modules takes, with its quiet zone.
        public func characters(side: Int) -> (columns: Int, lines: Int) {
            let total = side + 2 * QRMatrix.quietZone
            return ((total + across - 1) / across, (total + down - 1) / down)
        }
    }

    /// The code as text, `glyphs` deciding how many modules a character holds. With `ansi`,
    /// dark-on-light colours are forced so the code scans on dark terminals too.
    public func terminalText(ansi: Bool, glyphs: Glyphs = .halfBlocks) -> String {
        let q = Self.quietZone
        var out = ""
        var y = -q
        while y < size + q {
            if ansi { out += "\u{1B}[30;47m" }
            var x = -q
            while x < size + q {
                // Dark modules are drawn in the foreground colour on a light background.
                switch glyphs {
                case .halfBlocks:
                    switch (self[x, y], self[x, y + 1]) {
                    case (true, true): out += "█"
                    case (true, false): out += "▀"
                    case (false, true): out += "▄"
                    case (false, false): out += " "
                    }
                case .sextants:
                    var bits = 0
                    for (i, (dx, dy)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)].enumerated() where self[x + dx, y + dy] {
                        bits |= 1 << i
                    }
                    out.unicodeScalars.append(Self.sextant(bits))
                }
                x += glyphs.across
            }
            if ansi { out += "\u{1B}[0m" }
            out += "\n"
            y += glyphs.down
        }
        return out
    }

    /// The character for a 2×3 block whose bit i (0 top-left, 1 top-right, 2 middle-left … 5
    /// bottom-right) is a dark module. Unicode's sextants (U+1FB00…U+1FB3B) run in that binary order,
    /// leaving out the four that exist already: empty, the left and right halves, and the full block.
    public static func sextant(_ bits: Int) -> Unicode.Scalar {
        switch bits {
        case 0: return " "
        case 0b010101: return "▌"
        case 0b101010: return "▐"
        case 0b111111: return "█"
        default:
            let index = bits - 1 - (bits > 0b010101 ? 1 : 0) - (bits > 0b101010 ? 1 : 0)
            return Unicode.Scalar(0x1FB00 + UInt32(index)) ?? "?"
        }
    }

    /// A self-contained SVG, one path of unit squares.
    public func svg(moduleSize: Int = 8) -> String {
        let q = Self.quietZone
        let total = (size + 2 * q) * moduleSize
        var path = ""
        for y in 0..<size {
            for x in 0..<size where self[x, y] {
                path += "M\((x + q) * moduleSize),\((y + q) * moduleSize)h\(moduleSize)v\(moduleSize)h-\(moduleSize)z"
            }
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(total)" height="\(total)" viewBox="0 0 \(total) \(total)" shape-rendering="crispEdges">
            <rect width="\(total)" height="\(total)" fill="#ffffff"/>
            <path fill="#000000" d="\(path)"/>
            </svg>

            """
    }

    /// 8-bit grayscale pixels, `moduleSize` pixels per module, with the quiet zone.
    public func pixels(moduleSize: Int = 8) -> (width: Int, pixels: [UInt8]) {
        let q = Self.quietZone
        let width = (size + 2 * q) * moduleSize
        var px = [UInt8](repeating: 255, count: width * width)
        for y in 0..<size {
            for x in 0..<size where self[x, y] {
                for dy in 0..<moduleSize {
                    let row = ((y + q) * moduleSize + dy) * width
                    for dx in 0..<moduleSize { px[row + (x + q) * moduleSize + dx] = 0 }
                }
            }
        }
        return (width, px)
    }

    public func png(moduleSize: Int = 8) throws(QRError) -> [UInt8] {
        let (width, px) = pixels(moduleSize: moduleSize)
        do { return try PNG.encodeGray(width: width, height: width, pixels: px) } catch { throw QRError(error) }
    }
}
