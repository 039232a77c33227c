/// What a decoder made of advertised data in a format it recognised: the decoded frame, or
/// why it could not be decoded (cut short, encrypted, a value the format does not define).
/// Data in no format a decoder knows gives no `AdvertisedFormat` at all (nil).
public enum AdvertisedFormat<Frame: Sendable>: Sendable {
    case decoded(Frame)
    /// The frame is in the format but cannot be decoded; the reason for people
    /// (`"22 bytes, 23 needed"`). Nothing of the frame is guessed.
    case undecodable(String)

    /// The frame, nil when undecodable.
    public var frame: Frame? {
        if case .decoded(let frame) = self { frame } else { nil }
    }

    /// The decoded frame transformed, the reason kept.
    func map<Other>(_ transform: (Frame) -> Other) -> AdvertisedFormat<Other> {
        switch self {
        case .decoded(let frame): .decoded(transform(frame))
        case .undecodable(let reason): .undecodable(reason)
        }
    }
}

extension AdvertisedFormat: Equatable where Frame: Equatable {}
