/// Near misses in what a person typed: the name they probably meant.
public enum Spelling {
    /// Optimal string alignment distance (Levenshtein with adjacent transpositions), by Unicode scalar.
    public static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a.unicodeScalars)
        let y = Array(b.unicodeScalars)
        if x.isEmpty || y.isEmpty { return max(x.count, y.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: y.count + 1), count: x.count + 1)
        for i in 0...x.count { d[i][0] = i }
        for j in 0...y.count { d[0][j] = j }
        for i in 1...x.count {
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[x.count][y.count]
    }

    /// The name nearest to `word`, ignoring case, within `within` edits (default: two, or a quarter of
    /// the word's length when longer — "Grace Hoper" finds "Grace Hopper"); ties go to the earlier name.
    /// A name `word` begins, or that begins with `word`, counts as one edit away.
    public static func nearest(to word: String, among names: [String], within: Int? = nil) -> String? {
        let typed = word.lowercased()
        let limit = within ?? max(2, typed.count / 4)
        let scored = names.map { name -> (name: String, distance: Int) in
            let n = name.lowercased()
            let d = n.hasPrefix(typed) || typed.hasPrefix(n) ? min(1, distance(typed, n)) : distance(typed, n)
            return (name, d)
        }.filter { $0.distance <= limit && $0.distance > 0 }
        return scored.min { $0.distance < $1.distance }?.name
    }
}
