import Foundation
import Imago
import ImagoCodecs
import TerminalRendering
import Testing

@Suite struct HalfBlockRendererTests {
    let esc = "\u{1B}"

    /// 2x2: red, green / blue, white.
    let quad = Image(width: 2, height: 2, pixelFormat: .rgb8, pixels: [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255])

    @Test func eachCellIsTheUpperPixelOverTheLowerOne() {
        let lines = HalfBlockRenderer.lines(for: quad, columns: 2)
        #expect(lines == [
            "\(esc)[38;2;255;0;0m\(esc)[48;2;0;0;255m▀\(esc)[38;2;0;255;0m\(esc)[48;2;255;255;255m▀\(esc)[0m",
        ])
    }

    @Test func repeatedColoursAreNotRepeatedInTheOutput() {
        let gray = Image(width: 3, height: 2, pixelFormat: .gray8, pixels: [9, 9, 9, 9, 9, 9])
        #expect(HalfBlockRenderer.lines(for: gray, columns: 3) == ["\(esc)[38;2;9;9;9m\(esc)[48;2;9;9;9m▀▀▀\(esc)[0m"])
    }

    @Test func anOddLastRowIsCompletedWithTheBackground() {
        let column = Image(width: 1, height: 3, pixelFormat: .gray8, pixels: [10, 20, 30])
        let lines = HalfBlockRenderer.lines(for: column, columns: 1, background: .init(red: 1, green: 2, blue: 3))
        #expect(lines == [
            "\(esc)[38;2;10;10;10m\(esc)[48;2;20;20;20m▀\(esc)[0m",
            "\(esc)[38;2;30;30;30m\(esc)[48;2;1;2;3m▀\(esc)[0m",
        ])
    }

    @Test func transparencyIsBlendedOverTheBackground() {
        let clear = Image(width: 1, height: 2, pixelFormat: .rgba8, pixels: [255, 255, 255, 0, 255, 0, 0, 255])
        let lines = HalfBlockRenderer.lines(for: clear, columns: 1, background: .init(red: 40, green: 50, blue: 60))
        #expect(lines == ["\(esc)[38;2;40;50;60m\(esc)[48;2;255;0;0m▀\(esc)[0m"])
    }

    @Test func wideImagesAreScaledToTheColumnsWithTheirAspect() {
        let lines = HalfBlockRenderer.lines(for: Image(width: 100, height: 50, pixelFormat: .gray8, pixels: [UInt8](repeating: 7, count: 5_000)), columns: 10)
        #expect(lines.count == 3)   // 10x5 pixels: three rows of half blocks
        #expect(lines.allSatisfy { $0.components(separatedBy: "▀").count - 1 == 10 })
    }
}

@Suite struct MonochromeRenderingTests {
    @Test func withoutColourEachCellIsTheShadeOfItsTwoPixelsAndNoEscapeIsWritten() {
        // Two cells wide, two pixels high: black over black, white over white;
        // then a row of mid-grey over black.
        let image = Image(width: 2, height: 4, pixelFormat: .gray8, pixels: [0, 255, 0, 255, 128, 128, 0, 0])
        let lines = HalfBlockRenderer.lines(for: image, columns: 2, colour: false)
        #expect(lines == [" █", "░░"])
        #expect(!lines.joined().contains("\u{1B}"))
    }
}
