import streamlit as st
st.title("compaction")
