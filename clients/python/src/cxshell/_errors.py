"""What the world says when it refuses."""


class WorldError(Exception):
    """The world refused a request: `status` is the HTTP status (0 when the world could
    not be reached), `sentence` the world's own words, which are also the message."""

    def __init__(self, status: int, sentence: str) -> None:
        super().__init__(sentence)
        self.status = status
        self.sentence = sentence
