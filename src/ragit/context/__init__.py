"""The context plane: ``context pack`` selection and the context packet (pure functions)."""

from .pack import select_hits
from .packet import PacketInputError, PacketRequest, PacketResult, build_packet

__all__ = ["PacketInputError", "PacketRequest", "PacketResult", "build_packet", "select_hits"]
