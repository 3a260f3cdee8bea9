"""TIFF blocks laid out by hand, for tests that draw EXIF: IFD0, the Exif
and GPS IFDs and IFD1, in either byte order, each value in any TIFF type;
and the JPEG APP1 segment that carries one."""
import struct

ASCII, SHORT, LONG, RATIONAL, SSHORT, SLONG, SRATIONAL, FLOAT, DOUBLE = 2, 3, 4, 5, 8, 9, 10, 11, 12
# struct codes of one value of each TIFF type (a rational is a pair)
PACK = {SHORT: "H", LONG: "I", RATIONAL: "II", SSHORT: "h", SLONG: "i", SRATIONAL: "ii",
        FLOAT: "f", DOUBLE: "d"}


class Tiff:
    """A TIFF block laid out by hand: IFDs and their values in one byte
    order, every offset from the block's start."""

    def __init__(self, be):
        self.e = ">" if be else "<"
        self.be = be

    def value(self, typ, v):
        """(type, count, bytes) of a value of that type: v is a list of
        numbers, or text for ASCII."""
        e = self.e
        if typ == ASCII:
            b = v.encode("latin-1")
            return typ, len(b), b
        code = PACK[typ]
        out = b"".join(struct.pack(e + code, *(x if isinstance(x, tuple) else (x,)))
                       for x in v)
        return typ, len(v), out

    def build(self, ifd0, exif=None, gps=None, ifd1=None):
        """ifd0 ... ifd1: lists of (tag, type, count, bytes)."""
        e = self.e
        layout = [("ifd0", list(ifd0))]
        if exif is not None:
            layout.append(("exif", list(exif)))
        if gps is not None:
            layout.append(("gps", list(gps)))
        if ifd1 is not None:
            layout.append(("ifd1", list(ifd1)))
        # pointers first, so that every IFD's size is known
        if exif is not None:
            layout[0][1].append((0x8769, LONG, 1, b"\0" * 4))
        if gps is not None:
            layout[0][1].append((0x8825, LONG, 1, b"\0" * 4))

        def size(entries):
            data = sum((len(b) + 1) & ~1 for (_, _, _, b) in entries if len(b) > 4)
            return 2 + 12 * len(entries) + 4 + data

        at, off = 8, {}
        for name, entries in layout:
            off[name] = at
            at += size(entries)
        out = (b"MM\0*" if self.be else b"II*\0") + struct.pack(e + "I", 8)
        for name, entries in layout:
            entries = sorted(entries)
            if name == "ifd0":
                entries = [(t, ty, c, struct.pack(e + "I", off["exif" if t == 0x8769 else "gps"])
                            if t in (0x8769, 0x8825) else b) for (t, ty, c, b) in entries]
            base = off[name]
            data_at = base + 2 + 12 * len(entries) + 4
            head, data = struct.pack(e + "H", len(entries)), b""
            for tag, typ, cnt, b in entries:
                if len(b) <= 4:
                    head += struct.pack(e + "HHI", tag, typ, cnt) + b.ljust(4, b"\0")
                else:
                    head += struct.pack(e + "HHII", tag, typ, cnt, data_at + len(data))
                    data += b + (b"\0" if len(b) % 2 else b"")
            nxt = off["ifd1"] if name == "ifd0" and "ifd1" in off else 0
            out += head + struct.pack(e + "I", nxt) + data
        return out


def app1(tiff):
    body = b"Exif\0\0" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body
