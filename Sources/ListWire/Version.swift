/// listd's version: what `--version` prints in every program and `hello` reports as `server`.
public enum ListdVersion {
    public static let number = "0.1.0"
}
