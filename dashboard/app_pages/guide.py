import streamlit as st
st.title("guide")
